/*
 * A test-only foreign talosconfig for the backend's tests: an Ed25519 CA and an admin
 * client certificate made with openssl for these tests (100-year validity), the key
 * under the label Talos writes. Not a credential of anything.
 */

export const FOREIGN_CA_PEM = `-----BEGIN CERTIFICATE-----
MIIBfTCCAS+gAwIBAgIUboo1qwNnJzhM5osumWfefH/UoVowBQYDK2VwMDMxDjAM
BgNVBAoMBXRhbG9zMSEwHwYDVQQDDBhyYWNrc2lkZS1iYWNrZW5kLXRlc3QtY2Ew
IBcNMjYxMjAxMDkwNzQ2WhgPMjEyNjExMDcwOTA3NDZaMDMxDjAMBgNVBAoMBXRh
bG9zMSEwHwYDVQQDDBhyYWNrc2lkZS1iYWNrZW5kLXRlc3QtY2EwKjAFBgMrZXAD
IQCov5ye96mwyDpTbCDEnpToTejHzr3zhjESoJ3J3aqCAqNTMFEwHQYDVR0OBBYE
FNA1GER/LJu70T2/fKTGxCjr0idWMB8GA1UdIwQYMBaAFNA1GER/LJu70T2/fKTG
xCjr0idWMA8GA1UdEwEB/wQFMAMBAf8wBQYDK2VwA0EA+eiihlr+DS+9s/+owBpU
1sz3IAAkeuCZTPivaGP7Htmr0HlVMReKZs2Ik20vuF3fV3PgXkba8tztwqYMwTAc
Cw==
-----END CERTIFICATE-----
`;

export const FOREIGN_ADMIN_CRT_PEM = `-----BEGIN CERTIFICATE-----
MIIBEjCBxQIUJB+kI8uaYmdCTp1yFJUoHPMPsD0wBQYDK2VwMDMxDjAMBgNVBAoM
BXRhbG9zMSEwHwYDVQQDDBhyYWNrc2lkZS1iYWNrZW5kLXRlc3QtY2EwIBcNMjYx
MjAxMDkwNzQ2WhgPMjEyNjExMDcwOTA3NDZaMCMxETAPBgNVBAoMCG9zOmFkbWlu
MQ4wDAYDVQQDDAVhZG1pbjAqMAUGAytlcAMhAGL3//t1JzsVyJ0w0dD8/3+SHyHB
YubU0yq0XacDgMoKMAUGAytlcANBAJqoScK17t8Ux/GJqGWPCuZkTIsH+mE43pBF
gYqaC8/GGWOnp/E/FQRfIWitqaHE8HRihoIK6suj5Tkei2IvAgI=
-----END CERTIFICATE-----
`;

/** The body of the key: tests look for it in logs, answers and audit records. */
export const FOREIGN_KEY_MATERIAL =
  'MC4CAQAwBQYDK2VwBCIEIC7vm7KLOojgN8kEGZXAqdXZsZGd2aL2df1N7QMTRMS+';

export const FOREIGN_ADMIN_KEY_PEM = `-----BEGIN ED25519 PRIVATE KEY-----
MC4CAQAwBQYDK2VwBCIEIC7vm7KLOojgN8kEGZXAqdXZsZGd2aL2df1N7QMTRMS+
-----END ED25519 PRIVATE KEY-----
`;

const b64 = (text: string) => Buffer.from(text, 'utf8').toString('base64');

/** A talosconfig of the foreign cluster `plant-old`, as `talosctl gen config` writes it. */
export function foreignTalosconfig(
  options: { context?: string; key?: string; ca?: string } = {},
): string {
  const context = options.context ?? 'plant-old';
  return [
    `context: ${context}`,
    'contexts:',
    `  ${context}:`,
    '    endpoints:',
    '      - 127.0.10.41',
    '    nodes:',
    '      - 127.0.10.41',
    '      - 127.0.10.42',
    `    ca: ${options.ca ?? b64(FOREIGN_CA_PEM)}`,
    `    crt: ${b64(FOREIGN_ADMIN_CRT_PEM)}`,
    `    key: ${options.key ?? b64(FOREIGN_ADMIN_KEY_PEM)}`,
    '',
  ].join('\n');
}
