/*
 * Two operator processes against one rack, started as the Deployment starts its replicas
 * (the entry point, src/index.ts, with flags and the operator's own ServiceAccount), to
 * prove what leader election promises from outside:
 *
 * - both replicas are Ready (caches synced, webhook served), exactly one leads by the
 *   rackside_leader metric, and the webhook answers on both;
 * - SIGSTOP the leader: the standby takes the Lease and does the work; SIGCONT the old
 *   one: it sends and admits nothing more (Talos verb counts, Events by reporting
 *   instance, a maintenance created after the resume) and exits;
 * - a leader frozen past its renew deadline but resumed before the Lease expired (nobody
 *   else could have taken it yet) must not act either: its deadline is judged at the
 *   moment it resumes, not by a timer that could not fire while it was stopped;
 * - at least one replica is Ready through every handover, judged more strictly than the
 *   kubelet judges it (see the last test).
 *
 * RACKSIDE_TEST_OPERATOR_ENTRY runs another entry point (e.g. a copy of the code before a
 * change, to see this test fail on it).
 */
import {
  createWatchCache,
  ResourceClient,
  type RawKubeObject,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import { REPO_ROOT } from '@rackside/rack-testing';
import { spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import https from 'node:https';
import net from 'node:net';
import path from 'node:path';
import {
  OPERATOR_NAMESPACE as NS,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';
import { powerRack, TALOS_PROVIDER } from './testing/powerRack';

jest.setTimeout(240_000);

/** Short election times so the test takes seconds; renew deadline < lease duration. */
const LEASE_MS = 6000;
const RENEW_DEADLINE_MS = 3000;
const RETRY_MS = 500;

const ENTRY =
  process.env.RACKSIDE_TEST_OPERATOR_ENTRY ??
  path.join(REPO_ROOT, 'packages/operator/src/index.ts');
const NODE_TRANSFORM = require.resolve(
  '@backstage/cli/config/nodeTransform.cjs',
  { paths: [REPO_ROOT] },
);

interface Replica {
  identity: string;
  probePort: number;
  webhookPort: number;
  caFile: string;
  logFile: string;
  child: ChildProcess;
  exited: Promise<{ code: number | null; signal: string | null }>;
  exit?: { code: number | null; signal: string | null };
}

interface LeaseObject extends RawKubeObject {
  spec?: {
    holderIdentity?: string;
    renewTime?: string;
    leaseTransitions?: number;
  };
}

let env: OperatorRack;
let dir: string;
let kubeconfigFile: string;
let rack: ReturnType<typeof powerRack>;
let leases: WatchCache<LeaseObject>;
let leaseClient: ResourceClient<LeaseObject>;
/** Every holder the Lease has had, in order, as the watch saw it. */
const holders: { holder?: string; at: number; transitions?: number }[] = [];
const replicas = new Map<string, Replica>();
let sampler: { stop(): Promise<Sample[]> } | undefined;

/**
 * What a replica's /readyz said in one sample: 200, another status (the replica says it
 * is not ready), or nothing within the probe timeout (frozen, gone, or too busy).
 */
type Readiness = 'ready' | 'not ready' | 'silent';

interface Sample {
  at: number;
  ready: Record<string, Readiness>;
}

/** The kubelet's readiness probe timeout: its default (timeoutSeconds 1), which the chart keeps. */
const PROBE_TIMEOUT_MS = 1000;

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
  });
}

async function spawnReplica(identity: string): Promise<Replica> {
  const probePort = await freePort();
  const webhookPort = await freePort();
  const caFile = path.join(dir, `${identity}-ca.crt`);
  const logFile = path.join(dir, `${identity}.log`);
  fs.rmSync(caFile, { force: true });
  const out = fs.openSync(logFile, 'a');
  const child = spawn(
    process.execPath,
    [
      '--require',
      NODE_TRANSFORM,
      ENTRY,
      '--kubeconfig',
      kubeconfigFile,
      '--namespace',
      NS,
      '--identity',
      identity,
      '--probe-port',
      String(probePort),
      '--webhook-port',
      String(webhookPort),
      '--webhook-host',
      '127.0.0.1',
      '--webhook-ca-out',
      caFile,
      '--lease-duration',
      `${LEASE_MS}ms`,
      '--renew-deadline',
      `${RENEW_DEADLINE_MS}ms`,
      '--retry-period',
      `${RETRY_MS}ms`,
      '--reboot-deadline-seconds',
      '90',
      '--unanswered-deadline-seconds',
      '60',
    ],
    {
      cwd: path.join(REPO_ROOT, 'packages/operator'),
      env: process.env,
      stdio: ['ignore', out, out],
    },
  );
  fs.closeSync(out);
  const replica: Replica = {
    identity,
    probePort,
    webhookPort,
    caFile,
    logFile,
    child,
    exited: new Promise(resolve =>
      child.once('exit', (code, signal) => {
        replica.exit = { code, signal };
        resolve({ code, signal });
      }),
    ),
  };
  replicas.set(identity, replica);
  return replica;
}

const logTail = () =>
  [...replicas.values()]
    .map(r => {
      const text = fs.existsSync(r.logFile)
        ? fs.readFileSync(r.logFile, 'utf8')
        : '';
      return `--- ${r.identity}${
        r.exit ? ` (exited ${JSON.stringify(r.exit)})` : ''
      }:\n${text.split('\n').slice(-25).join('\n')}`;
    })
    .join('\n');

const waitFor = <T>(
  what: string,
  fn: () => Promise<T | undefined | false>,
  timeoutMs = 60_000,
) =>
  env.waitFor(
    what,
    async () => {
      try {
        return await fn();
      } catch (error) {
        throw new Error(`${(error as Error).message}\n${logTail()}`);
      }
    },
    timeoutMs,
  );

async function get(
  replica: Replica,
  route: string,
  timeoutMs = 800,
): Promise<{ status: number; body: string } | undefined> {
  try {
    const res = await fetch(`http://127.0.0.1:${replica.probePort}${route}`, {
      signal: AbortSignal.timeout(timeoutMs),
    });
    return { status: res.status, body: await res.text() };
  } catch {
    return undefined; // not listening, frozen or gone
  }
}

async function leaderMetric(replica: Replica): Promise<number | undefined> {
  const res = await get(replica, '/metrics');
  const line = res?.body
    .split('\n')
    .find(l => l.startsWith('rackside_leader '));
  return line ? Number(line.split(' ')[1]) : undefined;
}

/** An AdmissionReview over TLS, trusting the CA this replica wrote. */
function review(replica: Replica): Promise<{ status: number; body: any }> {
  const uid = `probe-${replica.identity}-${Date.now()}`;
  const payload = JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid,
      operation: 'DELETE',
      namespace: NS,
      name: 'nothing',
      kind: {
        group: 'rackside.dev',
        version: 'v1alpha1',
        kind: 'MachineReclaim',
      },
      userInfo: { username: 'someone' },
    },
  });
  return new Promise((resolve, reject) => {
    const req = https.request(
      {
        host: '127.0.0.1',
        port: replica.webhookPort,
        path: '/validate-machinereclaims',
        method: 'POST',
        ca: fs.readFileSync(replica.caFile),
        headers: { 'content-type': 'application/json' },
        timeout: 5000,
      },
      res => {
        const chunks: Buffer[] = [];
        res.on('data', c => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            body: JSON.parse(Buffer.concat(chunks).toString('utf8')),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** /readyz of every replica every 100 ms, as the kubelet probes it, until stopped. */
function sampleReadiness() {
  const samples: Sample[] = [];
  let running = true;
  const loop = (async () => {
    while (running) {
      const live = [...replicas.values()];
      const ready: Record<string, Readiness> = {};
      await Promise.all(
        live.map(async r => {
          const res = await get(r, '/readyz', PROBE_TIMEOUT_MS);
          if (!res) ready[r.identity] = 'silent';
          else ready[r.identity] = res.status === 200 ? 'ready' : 'not ready';
        }),
      );
      samples.push({ at: Date.now(), ready });
      await new Promise(r => setTimeout(r, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return samples;
    },
  };
}

const reboots = async (node: string) => (await rack.powerCounts(node)).reboot;

/** The Events of a NodeMaintenance, with who reported them. */
async function events(name: string) {
  const list = await env.core.listNamespacedEvent({
    namespace: 'default',
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items.map(e => ({
    reason: e.reason ?? '',
    instance: e.reportingInstance ?? '',
    at: new Date(
      (e.lastTimestamp as any) ?? (e.eventTime as any) ?? 0,
    ).getTime(),
  }));
}

/** Every Event the rack holds that this replica reported. */
async function eventsBy(identity: string) {
  const list = await env.core.listEventForAllNamespaces({});
  return list.items
    .filter(e => e.reportingInstance === identity)
    .map(e => ({
      reason: e.reason,
      object: e.involvedObject?.name,
      at: new Date((e.lastTimestamp as any) ?? 0).getTime(),
    }));
}

/**
 * What a replica logged about requests after `since`: any apiserver answer to a write
 * (a conflict, a refusal) proves the write went out. The only thing allowed is the
 * gate's own refusal ("not leading: ... not done"), which never leaves the process.
 */
function messagesAfter(replica: Replica, since: number): string[] {
  return fs
    .readFileSync(replica.logFile, 'utf8')
    .split('\n')
    .flatMap(line => {
      try {
        const entry = JSON.parse(line) as { time: string; msg: string };
        return Date.parse(entry.time) >= since ? [entry.msg] : [];
      } catch {
        return []; // not a log line (e.g. a stack trace)
      }
    });
}

function writesAfter(replica: Replica, since: number): string[] {
  const messages = messagesAfter(replica, since);
  // The JSON log is read: the step-down itself is in it.
  expect(messages.some(m => /lost lease rackside-operator/.test(m))).toBe(true);
  return messages
    .filter(msg => /^(reconcile|event|retention)/.test(msg))
    .filter(msg => !/not leading: .* not done/.test(msg));
}

const holder = () =>
  leases.get(`${NS}/rackside-operator`)?.spec?.holderIdentity;

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: false,
  });
  dir = fs.mkdtempSync(path.join(env.rack.info.dir, 'handover-'));
  kubeconfigFile = path.join(dir, 'operator.kubeconfig');
  fs.writeFileSync(kubeconfigFile, env.operatorKc.exportConfig(), {
    mode: 0o600,
  });
  rack = powerRack(env);
  await rack.createPowerSecrets();
  await rack.writeProvider(TALOS_PROVIDER);

  leaseClient = new ResourceClient<LeaseObject>(env.admin, {
    group: 'coordination.k8s.io',
    version: 'v1',
    plural: 'leases',
    kind: 'Lease',
    namespaced: true,
  });
  leases = createWatchCache<LeaseObject>({
    kubeConfig: env.admin,
    path: `/apis/coordination.k8s.io/v1/namespaces/${NS}/leases`,
    name: 'leases',
  });
  const record = (lease: LeaseObject) => {
    if (lease.metadata?.name !== 'rackside-operator') return;
    const h = lease.spec?.holderIdentity;
    if (holders.at(-1)?.holder !== h) {
      holders.push({
        holder: h,
        at: Date.now(),
        transitions: lease.spec?.leaseTransitions,
      });
    }
  };
  leases.on('add', record);
  leases.on('update', record);
  await leases.synced;

  await spawnReplica('op-a');
  // The second replica starts once the first leads, so who leads first is known.
  await waitFor('op-a holds the Lease', async () => holder() === 'op-a');
  await spawnReplica('op-b');
}, 300_000);

afterAll(async () => {
  await sampler?.stop();
  for (const r of replicas.values()) {
    if (!r.exit) {
      r.child.kill('SIGCONT');
      r.child.kill('SIGKILL');
    }
  }
  await Promise.all([...replicas.values()].map(r => r.exited));
  await leases?.stop();
  await env?.stop();
}, 60_000);

describe('two operator replicas', () => {
  it('are both Ready, exactly one leads by the metric, and both answer the webhook', async () => {
    const [a, b] = [replicas.get('op-a')!, replicas.get('op-b')!];
    await waitFor('both /readyz 200', async () => {
      const [ra, rb] = await Promise.all([
        get(a, '/readyz'),
        get(b, '/readyz'),
      ]);
      return ra?.status === 200 && rb?.status === 200;
    });
    const leading = await waitFor('the metric names one leader', async () => {
      const values = await Promise.all([leaderMetric(a), leaderMetric(b)]);
      return values.every(v => v !== undefined) && values;
    });
    expect(leading).toEqual([1, 0]);
    expect(holder()).toBe('op-a');
    for (const replica of [a, b]) {
      const answer = await review(replica);
      expect(answer.status).toBe(200);
      expect(answer.body.kind).toBe('AdmissionReview');
      expect(typeof answer.body.response.allowed).toBe('boolean');
      expect(answer.body.response.uid).toMatch(/^probe-/);
    }
    sampler = sampleReadiness();
  });

  it('SIGSTOP the leader: the standby takes over and does the work; SIGCONT the old one: it sends and admits nothing, and exits', async () => {
    const [a, b] = [replicas.get('op-a')!, replicas.get('op-b')!];
    const rebootsBefore = await reboots('worker-1');
    a.child.kill('SIGSTOP');
    const frozenAt = Date.now();
    // Asked for while the leader is frozen: only the successor may carry it out.
    await env.create('during-freeze', 'worker-1', 'reboot');
    await waitFor('op-b holds the Lease', async () => holder() === 'op-b');
    await env.phaseIs('during-freeze', 'Complete', 120_000);
    expect(await reboots('worker-1')).toBe(rebootsBefore + 1);

    a.child.kill('SIGCONT');
    const resumedAt = Date.now();
    // The old leader finds its deadline passed and exits (like controller-runtime).
    const exit = await Promise.race([
      a.exited,
      new Promise<undefined>(r => setTimeout(r, 30_000)),
    ]);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(fs.readFileSync(a.logFile, 'utf8')).toMatch(
      /lost lease rackside-operator: the renew deadline passed/,
    );
    // (Before the fix the old leader's first reconcile after the resume reached the
    // apiserver and lost on resourceVersion: "reconcile during-freeze: ... has been
    // modified".)
    expect(writesAfter(a, resumedAt - 1000)).toEqual([]);

    // Asked for after the resume: handled by the new leader alone.
    await env.create('after-resume', 'worker-2', 'reboot');
    const rebootsW2 = await reboots('worker-2');
    await env.phaseIs('after-resume', 'Complete', 120_000);
    expect(await reboots('worker-2')).toBe(rebootsW2 + 1);
    expect(await reboots('worker-1')).toBe(rebootsBefore + 1);

    for (const name of ['during-freeze', 'after-resume']) {
      const reported = await events(name);
      expect(reported.length).toBeGreaterThan(0);
      expect(new Set(reported.map(e => e.instance))).toEqual(new Set(['op-b']));
    }
    // Nothing at all from the old leader since it was frozen.
    // (Event times have whole seconds; the freeze lasted longer than one.)
    expect(resumedAt - frozenAt).toBeGreaterThan(LEASE_MS);
    expect(
      (await eventsBy('op-a')).filter(e => e.at >= resumedAt - 1000),
    ).toEqual([]);
    // Holder history: op-a, then op-b, nobody in between.
    expect(holders.map(h => h.holder)).toEqual(['op-a', 'op-b']);
    expect(b.exit).toBeUndefined();
  });

  it('a leader frozen past its renew deadline but resumed before its Lease expired acts no more: the standby takes over', async () => {
    const b = replicas.get('op-b')!;
    // The Deployment restarts the replica that exited; it stands by, Ready.
    const a = await spawnReplica('op-a2');
    await waitFor(
      'op-a2 Ready',
      async () => (await get(a, '/readyz'))?.status === 200,
    );

    b.child.kill('SIGSTOP');
    await env.create('short-freeze', 'worker-3', 'cordon');
    // op-b's deadline is its last renewal's start (the renewTime it wrote) plus the renew
    // deadline; the Lease cannot expire for op-a2 before op-b's last write plus the lease
    // duration. Resume in between.
    // Read from the apiserver, not the watch (which may lag by one renewal).
    const lease = await leaseClient.get('rackside-operator', { namespace: NS });
    expect(lease.spec?.holderIdentity).toBe('op-b');
    const renewed = lease.spec?.renewTime;
    const deadline = Date.parse(renewed!) + RENEW_DEADLINE_MS;
    await waitFor(
      "op-b's renew deadline passed",
      async () => Date.now() > deadline + 300,
      10_000,
    );
    expect(holder()).toBe('op-b');
    b.child.kill('SIGCONT');
    const resumedAt = Date.now();

    await waitFor(
      'op-a2 holds the Lease',
      async () => holder() === 'op-a2',
      60_000,
    );
    await env.phaseIs('short-freeze', 'Cordoned', 60_000);
    const exit = await Promise.race([
      b.exited,
      new Promise<undefined>(r => setTimeout(r, 30_000)),
    ]);
    expect(exit).toEqual({ code: 1, signal: null });
    expect(writesAfter(b, resumedAt - 1000)).toEqual([]);
    const reported = await events('short-freeze');
    expect(reported.length).toBeGreaterThan(0);
    expect(new Set(reported.map(e => e.instance))).toEqual(new Set(['op-a2']));
    expect(resumedAt).toBeGreaterThan(deadline);
    expect(
      (await eventsBy('op-b')).filter(e => e.at >= resumedAt - 1000),
    ).toEqual([]);
    expect(holders.map(h => h.holder)).toEqual(['op-a', 'op-b', 'op-a2']);
    expect((await get(a, '/readyz'))?.status).toBe(200);
    expect(await leaderMetric(a)).toBe(1);
    expect(b.exit).toBeDefined();
  });

  it('kept at least one replica Ready through both handovers', async () => {
    const samples = await sampler!.stop();
    sampler = undefined;
    expect(samples.length).toBeGreaterThan(50);
    const noneReady = (s: Sample) => !Object.values(s.ready).includes('ready');
    // Never a moment where a replica says it is not ready and none says it is.
    expect(
      samples.filter(
        s => noneReady(s) && Object.values(s.ready).includes('not ready'),
      ),
    ).toEqual([]);
    // Nobody answering in time (one frozen on purpose, the other busy taking over on a
    // loaded machine) for one sample at most: that is one failed probe, and the kubelet
    // takes a pod out of Ready only after failureThreshold (3) failed probes in a row.
    expect(
      samples.filter(
        (s, i) => i > 0 && noneReady(s) && noneReady(samples[i - 1]),
      ),
    ).toEqual([]);
  });
});
