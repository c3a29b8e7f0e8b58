import { X509Certificate, createPrivateKey } from 'node:crypto';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import {
  createCertificateAuthority,
  issueCertificate,
  selfSignedServingCertificate,
} from './certificates';

describe('certificates', () => {
  it('issues a serving certificate for the hosts that verifies against its CA', async () => {
    const serving = await selfSignedServingCertificate([
      '127.0.0.1',
      'localhost',
    ]);
    const ca = new X509Certificate(serving.caPem);
    const leaf = new X509Certificate(serving.certPem);
    expect(ca.ca).toBe(true);
    expect(leaf.ca).toBe(false);
    expect(leaf.verify(ca.publicKey)).toBe(true);
    expect(leaf.checkIP('127.0.0.1')).toBe('127.0.0.1');
    expect(leaf.checkHost('localhost')).toBe('localhost');
    expect(leaf.checkHost('example.com')).toBeUndefined();
    expect(createPrivateKey(serving.keyPem).asymmetricKeyType).toBe('ec');

    // A TLS client trusting only the CA accepts the server.
    const server = https.createServer(
      { cert: serving.certPem, key: serving.keyPem },
      (_req, res) => res.end('ok'),
    );
    await new Promise<void>(r => server.listen(0, '127.0.0.1', r));
    const { port } = server.address() as AddressInfo;
    try {
      const body = await new Promise<string>((resolve, reject) => {
        https
          .get(`https://127.0.0.1:${port}/`, { ca: serving.caPem }, res => {
            let text = '';
            res.on('data', d => (text += d));
            res.on('end', () => resolve(text));
          })
          .on('error', reject);
      });
      expect(body).toBe('ok');
    } finally {
      server.close();
    }
  });

  it('issues client certificates with an organization', async () => {
    const ca = await createCertificateAuthority('talos', {
      organization: 'talos',
    });
    const client = await issueCertificate(ca, {
      commonName: 'admin',
      organization: 'os:admin',
      usage: 'client',
    });
    const cert = new X509Certificate(client.certPem);
    expect(cert.subject).toContain('O=os:admin');
    expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
  });
});
