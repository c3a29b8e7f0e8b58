/*
 * A throw-away certificate authority and the certificates it issues (ECDSA P-256), made in
 * memory with WebCrypto: the webhook's self-signed serving certificate for tests and the
 * demo (the chart passes a certificate from files instead), and test identities. Keys
 * never leave the process except as the PEM the caller asks for.
 */
import * as x509 from '@peculiar/x509';
import { isIP } from 'node:net';
import { webcrypto } from 'node:crypto';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const subtle = webcrypto.subtle as SubtleCrypto;
const provider = webcrypto as unknown as Crypto;

export interface CertificateAuthority {
  certPem: string;
  certificate: x509.X509Certificate;
  privateKey: CryptoKey;
}

export interface IssuedCertificate {
  certPem: string;
  /** PKCS#8 under `PRIVATE KEY`. */
  keyPem: string;
}

function validity(days: number) {
  const notBefore = new Date(Date.now() - 60_000);
  return {
    notBefore,
    notAfter: new Date(notBefore.getTime() + days * 86_400_000),
  };
}

/** RFC 4514 needs commas, plus signs and the like escaped in a name's value. */
function dnValue(value: string): string {
  return value.replace(/([,+"\\<>;=])/g, '\\$1');
}

async function keyPair(): Promise<CryptoKeyPair> {
  return (await subtle.generateKey(ALGORITHM, true, [
    'sign',
    'verify',
  ])) as CryptoKeyPair;
}

async function keyPem(key: CryptoKey): Promise<string> {
  const der = await subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

/** A self-signed CA valid for `days` (default one year). */
export async function createCertificateAuthority(
  commonName: string,
  options: { organization?: string; days?: number } = {},
): Promise<CertificateAuthority> {
  const keys = await keyPair();
  const name = [
    options.organization ? `O=${dnValue(options.organization)}` : undefined,
    `CN=${dnValue(commonName)}`,
  ]
    .filter(Boolean)
    .join(', ');
  const certificate = await x509.X509CertificateGenerator.createSelfSigned(
    {
      name,
      keys,
      signingAlgorithm: ALGORITHM,
      ...validity(options.days ?? 365),
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign,
          true,
        ),
        await x509.SubjectKeyIdentifierExtension.create(
          keys.publicKey,
          false,
          provider,
        ),
      ],
    },
    provider,
  );
  return {
    certPem: certificate.toString('pem'),
    certificate,
    privateKey: keys.privateKey,
  };
}

/**
 * A leaf certificate signed by `ca`: `server` with the hosts as SANs (IP addresses as IP
 * SANs), or `client` (e.g. a talosconfig's admin certificate with organization os:admin).
 */
export async function issueCertificate(
  ca: CertificateAuthority,
  options: {
    commonName: string;
    usage: 'server' | 'client';
    hosts?: readonly string[];
    organization?: string;
    days?: number;
  },
): Promise<IssuedCertificate> {
  const keys = await keyPair();
  const subject = [
    options.organization ? `O=${dnValue(options.organization)}` : undefined,
    `CN=${dnValue(options.commonName)}`,
  ]
    .filter(Boolean)
    .join(', ');
  const hosts = options.hosts ?? [];
  const extensions: x509.Extension[] = [
    new x509.BasicConstraintsExtension(false, undefined, true),
    new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
    new x509.ExtendedKeyUsageExtension(
      [
        options.usage === 'server'
          ? x509.ExtendedKeyUsage.serverAuth
          : x509.ExtendedKeyUsage.clientAuth,
      ],
      false,
    ),
    await x509.AuthorityKeyIdentifierExtension.create(
      ca.certificate,
      false,
      provider,
    ),
  ];
  if (hosts.length > 0) {
    extensions.push(
      new x509.SubjectAlternativeNameExtension(
        hosts.map(host => ({
          type: isIP(host) ? ('ip' as const) : ('dns' as const),
          value: host,
        })),
        false,
      ),
    );
  }
  const certificate = await x509.X509CertificateGenerator.create(
    {
      subject,
      issuer: ca.certificate.subject,
      publicKey: keys.publicKey,
      signingKey: ca.privateKey,
      signingAlgorithm: ALGORITHM,
      ...validity(options.days ?? 365),
      extensions,
    },
    provider,
  );
  return {
    certPem: certificate.toString('pem'),
    keyPem: await keyPem(keys.privateKey),
  };
}

/** The webhook's self-signed serving certificate: a CA (the caBundle to register) and a leaf for `hosts`. */
export async function selfSignedServingCertificate(
  hosts: readonly string[],
): Promise<IssuedCertificate & { caPem: string }> {
  const ca = await createCertificateAuthority('rackside-operator-webhook-ca');
  const leaf = await issueCertificate(ca, {
    commonName: hosts[0] ?? 'rackside-operator-webhook',
    usage: 'server',
    hosts,
  });
  return { ...leaf, caPem: ca.certPem };
}
