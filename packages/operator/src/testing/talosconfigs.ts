/* Test helper: a talosconfig in Talos's format (base64 PEM fields) for a fresh CA. */
import { stringify } from 'yaml';
import {
  createCertificateAuthority,
  issueCertificate,
} from '../webhook/certificates';

const b64 = (pem: string) => Buffer.from(pem, 'utf8').toString('base64');

/** A talosconfig whose admin certificate a fresh CA issued; `caPem` is that CA. */
export async function makeTalosconfig(
  context: string,
  endpoints: string[],
): Promise<{ text: string; caPem: string }> {
  const ca = await createCertificateAuthority(context, {
    organization: 'talos',
  });
  const admin = await issueCertificate(ca, {
    commonName: 'admin',
    organization: 'os:admin',
    usage: 'client',
  });
  const text = stringify({
    context,
    contexts: {
      [context]: {
        endpoints,
        nodes: endpoints,
        ca: b64(ca.certPem),
        crt: b64(admin.certPem),
        key: b64(admin.keyPem),
      },
    },
  });
  return { text, caPem: ca.certPem };
}
