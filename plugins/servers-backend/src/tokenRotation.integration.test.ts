/*
 * An out-of-cluster portal's token expires (a projected token is rewritten by the kubelet,
 * one from `kubectl create token` by a scheduled job). On the simulated rack, the backend
 * reads `serviceAccountTokenFile`; the file is replaced with a new token of the same
 * ServiceAccount and the old token is revoked (each is bound to a Secret: deleting the
 * Secret invalidates it, as an expiry would). The backend keeps writing with the new one.
 */
import { KubeHttp } from '@rackside/plugin-servers-node';
import {
  eventually,
  startTestRack,
  type TestRack,
} from '@rackside/rack-testing';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import request from 'supertest';
import {
  installRackside,
  startServersBackendOnRack,
} from './testing/rackBackend';

jest.setTimeout(60_000);

type Obj = Record<string, any>;

const NS = 'rackside-system';
const SA = 'rackside-backstage';
const REASON = 'integration test: token rotation';

let rack: TestRack | undefined;
let admin: KubeHttp;
let dir: string;

beforeAll(async () => {
  rack = await startTestRack({ withTalos: false, withRedfish: false });
  ({ admin } = await installRackside(rack));
  dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-token-'));
}, 180_000);

afterAll(async () => {
  await rack?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
}, 60_000);

/** A token of the backend's ServiceAccount that is valid while the Secret `name` exists. */
async function boundToken(name: string): Promise<string> {
  const secret: Obj = await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${NS}/secrets`,
    body: {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name, namespace: NS },
    },
  });
  const minted: Obj = await admin.request({
    method: 'POST',
    path: `/api/v1/namespaces/${NS}/serviceaccounts/${SA}/token`,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: {
        expirationSeconds: 3600,
        boundObjectRef: {
          apiVersion: 'v1',
          kind: 'Secret',
          name,
          uid: secret.metadata.uid,
        },
      },
    },
  });
  return minted.status.token;
}

/** As a kubelet's projected volume does: a new file renamed over the old one. */
function writeAtomically(file: string, content: string) {
  const tmp = `${file}.${process.pid}.tmp`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
}

const actionUrl = (node: string, action: string) =>
  `/api/servers/clusters/plant-a/servers/${node}/actions/${action}`;

it('keeps writing after the token file is rotated and the old token revoked', async () => {
  const tokenFile = path.join(dir, 'token');
  const first = await boundToken('rotation-first');
  // `kubectl create token > file` leaves a newline at the end.
  fs.writeFileSync(tokenFile, `${first}\n`);
  const backend = await startServersBackendOnRack({
    rack: rack!,
    token: '',
    cluster: {
      serviceAccountToken: undefined,
      serviceAccountTokenFile: tokenFile,
    },
  });
  try {
    const cordon = await request(backend.server)
      .post(actionUrl('worker-1', 'cordon'))
      .send({ reason: REASON });
    expect(cordon.status).toBe(201);
    const name: string = cordon.body.name;

    const second = await boundToken('rotation-second');
    writeAtomically(tokenFile, `${second}\n`);
    await admin.request({
      method: 'DELETE',
      path: `/api/v1/namespaces/${NS}/secrets/rotation-first`,
    });
    // The old token is refused from now on (the apiserver checks the bound Secret).
    await eventually(
      'the first token revoked',
      async () => ((await revoked(first)) ? true : undefined),
      { timeoutMs: 30_000, intervalMs: 250 },
    );

    const back = await request(backend.server)
      .post(actionUrl('worker-1', 'uncordon'))
      .send({ reason: REASON });
    expect(back.status).toBe(200);
    expect(back.body).toEqual({ name });
    const stored: Obj = await admin.request({
      method: 'GET',
      path: `/apis/rackside.dev/v1alpha1/nodemaintenances/${name}`,
    });
    expect(stored.spec.returnToService?.reason).toBe(REASON);

    // A file caught empty half-way through a rewrite keeps the last token.
    fs.writeFileSync(tokenFile, '');
    const third = await request(backend.server)
      .post(actionUrl('worker-2', 'cordon'))
      .send({ reason: REASON });
    expect(third.status).toBe(201);
  } finally {
    await backend.stop();
  }
});

/** Whether the apiserver refuses `token` (TokenReview as the admin). */
async function revoked(token: string): Promise<boolean> {
  const review: Obj = await admin.request({
    method: 'POST',
    path: '/apis/authentication.k8s.io/v1/tokenreviews',
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenReview',
      spec: { token },
    },
  });
  return review.status?.authenticated !== true;
}
