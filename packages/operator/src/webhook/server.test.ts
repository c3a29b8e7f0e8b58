import { KubeConfig } from '@kubernetes/client-node';
import fs from 'node:fs';
import https from 'node:https';
import os from 'node:os';
import path from 'node:path';
import {
  serveMachineReclaimWebhook,
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
  urlPath: string,
  body: string,
): Promise<{ status: number; json: any }> {
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: server.port,
        path: urlPath,
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

  it('as the operator runs it: self-signed, with the CA written out for the registration', async () => {
    const caOut = path.join(
      fs.mkdtempSync(path.join(os.tmpdir(), 'webhook-')),
      'ca.crt',
    );
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: 'https://127.0.0.1:1' }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    const lines: string[] = [];
    const served = await serveMachineReclaimWebhook({
      kubeConfig,
      port: 0,
      host: '127.0.0.1',
      certHosts: ['127.0.0.1'],
      caOut,
      log: m => lines.push(m),
    });
    try {
      const ca = fs.readFileSync(caOut, 'utf8');
      const status = await new Promise<number>((resolve, reject) => {
        https
          .get(
            { host: '127.0.0.1', port: served.port, path: '/healthz', ca },
            res => {
              res.resume();
              resolve(res.statusCode ?? 0);
            },
          )
          .on('error', reject);
      });
      expect(status).toBe(200);
      expect(lines[0]).toMatch(
        /admission webhook on https:\/\/127\.0\.0\.1:\d+\/validate-machinereclaims \(self-signed for 127\.0\.0\.1, CA written to /,
      );
    } finally {
      await served.close();
    }
  });
});
