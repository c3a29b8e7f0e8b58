import https from 'node:https';
import {
  startWebhookServer,
  webhookTls,
  WEBHOOK_PATH,
  type WebhookServer,
} from './server';
import { reclaimObject } from '../testing/reclaimFixtures';

let server: WebhookServer;
let caPem: string;
const reviews: string[] = [];

function post(
  path: string,
  body: string,
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: server.port,
        path,
        method: 'POST',
        ca: caPem,
        headers: { 'content-type': 'application/json' },
      },
      res => {
        let text = '';
        res.on('data', d => (text += d));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, json: JSON.parse(text) }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

beforeAll(async () => {
  const tls = await webhookTls({ hosts: ['127.0.0.1', 'localhost'] });
  caPem = tls.caPem!;
  server = await startWebhookServer({
    tls,
    host: '127.0.0.1',
    port: 0,
    access: {
      canReclaim: async user => {
        reviews.push(user.username ?? '');
        return { allowed: user.username === 'admin' };
      },
    },
  });
});

afterAll(() => server.close());

const review = (username: string) =>
  JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'abc-123',
      resource: {
        group: 'rackside.dev',
        version: 'v1alpha1',
        resource: 'machinereclaims',
      },
      operation: 'CREATE',
      userInfo: { username },
      namespace: 'rackside-system',
      object: reclaimObject(),
    },
  });

describe('webhook server', () => {
  it('answers an AdmissionReview over TLS with the CA it made: allowed', async () => {
    const res = await post(WEBHOOK_PATH, review('admin'));
    expect(res.status).toBe(200);
    expect(res.json).toEqual({
      apiVersion: 'admission.k8s.io/v1',
      kind: 'AdmissionReview',
      response: { uid: 'abc-123', allowed: true },
    });
  });

  it('answers a denial with the status code and message', async () => {
    const res = await post(WEBHOOK_PATH, review('mallory'));
    expect(res.json.response).toMatchObject({
      uid: 'abc-123',
      allowed: false,
      status: {
        code: 403,
        reason: 'Forbidden',
        message: expect.stringMatching(/^mallory may not/),
      },
    });
    expect(reviews).toEqual(['admin', 'mallory']);
  });

  it('rejects what is not an AdmissionReview, and unknown paths', async () => {
    expect((await post(WEBHOOK_PATH, '{nope')).status).toBe(400);
    expect(
      (await post(WEBHOOK_PATH, JSON.stringify({ kind: 'Pod' }))).status,
    ).toBe(400);
    expect((await post('/other', review('admin'))).status).toBe(404);
  });

  it('takes a certificate from files, and needs both', async () => {
    await expect(
      webhookTls({ certFile: '/nonexistent', hosts: [] }),
    ).rejects.toThrow(/needs both --webhook-cert-file and --webhook-key-file/);
  });
});
