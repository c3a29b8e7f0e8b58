/*
 * The operator against the real apiserver of the simulated rack, running with its own
 * ServiceAccount and a minimal ClusterRole (as the chart grants it).
 */
import { CoordinationV1Api } from '@kubernetes/client-node';
import type { NodeMaintenance } from '@rackside/plugin-servers-common';
import type { NodeObject, ResourceClient } from '@rackside/plugin-servers-node';
import type { TestRack } from '@rackside/rack-testing';
import { spawn } from 'node:child_process';
import net from 'node:net';
import path from 'node:path';
import type { Operator } from './operator';
import {
  flag,
  OPERATOR_NAMESPACE as NS,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';

jest.setTimeout(60_000);

let env: OperatorRack;
let rack: TestRack;
let admin: OperatorRack['admin'];
let nms: ResourceClient<NodeMaintenance>;
let nodes: ResourceClient<NodeObject>;
let operator: Operator | undefined;
let start: OperatorRack['start'];
let waitFor: OperatorRack['waitFor'];
let create: OperatorRack['create'];
let phaseIs: OperatorRack['phaseIs'];
let unschedulable: OperatorRack['unschedulable'];
let eventReasons: OperatorRack['eventReasons'];

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: false,
    withRedfish: false,
    withWorkloads: false,
  });
  ({ rack, admin, nms, nodes, start, waitFor, create, phaseIs } = env);
  ({ unschedulable, eventReasons } = env);
  operator = await start();
  await waitFor('operator ready', async () => operator!.isReady());
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

describe('NodeMaintenance, intent cordon', () => {
  it('cordons, parks in Cordoned, returns to service and completes', async () => {
    await create('cordon-w1', 'worker-1');
    const cordoned = await phaseIs('cordon-w1', 'Cordoned');
    expect(cordoned.status?.wasUnschedulable).toBe(false);
    expect(cordoned.status?.cordonedAt).toBeDefined();
    expect(cordoned.status?.observedGeneration).toBe(1);
    expect(await unschedulable('worker-1')).toBe(true);

    await nms.patch('cordon-w1', { spec: { returnToService: flag } } as any);
    const complete = await phaseIs('cordon-w1', 'Complete');
    expect(complete.status?.completedAt).toBeDefined();
    expect(complete.status?.history?.map(h => h.phase)).toEqual([
      'Requested',
      'Cordoned',
      'Returning',
      'Complete',
    ]);
    expect(await unschedulable('worker-1')).toBe(false);
    const reasons = await waitFor('events', async () => {
      const r = await eventReasons('cordon-w1');
      return r.length >= 4 && r;
    });
    expect(reasons).toEqual(
      expect.arrayContaining([
        'Requested',
        'Cordoned',
        'Returning',
        'Complete',
      ]),
    );
  });

  it('abandon restores a node that was already unschedulable', async () => {
    await nodes.patch(
      'worker-2',
      { spec: { unschedulable: true } },
      { type: 'strategic' },
    );
    await create('abandon-w2', 'worker-2');
    const cordoned = await phaseIs('abandon-w2', 'Cordoned');
    expect(cordoned.status?.wasUnschedulable).toBe(true);
    await nms.patch('abandon-w2', { spec: { abandon: flag } } as any);
    const complete = await phaseIs('abandon-w2', 'Complete');
    expect(complete.status?.abandoned).toBe(true);
    expect(await unschedulable('worker-2')).toBe(true);
  });

  it('refuses a virtual node', async () => {
    await create('virt', 'virt-1');
    const refused = await phaseIs('virt', 'Refused');
    expect(refused.status?.refusal?.reason).toMatch(/virtual/);
    expect(await unschedulable('virt-1')).toBe(false);
  });

  it('refuses a second maintenance of a busy node, naming the first', async () => {
    await create('busy-1', 'worker-3');
    await phaseIs('busy-1', 'Cordoned');
    await create('busy-2', 'worker-3');
    const refused = await phaseIs('busy-2', 'Refused');
    expect(refused.status?.refusal?.blockingMaintenance).toBe('busy-1');
    // The Event follows the status write.
    const reasons = await waitFor('the Refused event', async () => {
      const r = await eventReasons('busy-2');
      return r.includes('Refused') && r;
    });
    expect(reasons).toContain('Refused');
  });

  it('drains a node without pods straight to Drained and parks there', async () => {
    await create('drain-w5', 'worker-5', 'drain');
    const nm = await phaseIs('drain-w5', 'Drained');
    expect(nm.status?.drain).toMatchObject({
      total: 0,
      evicted: 0,
      pending: 0,
    });
    expect(nm.status?.history?.map(h => h.phase)).toEqual([
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
    ]);
    expect(await unschedulable('worker-5')).toBe(true);
  });

  it('refuses every reboot where no power channel is configured, before touching the node', async () => {
    // (The race of two reboots for the last margin runs in power.integration.test.ts,
    // where a channel is configured.)
    await Promise.all([
      create('reboot-cp1', 'cp-1', 'reboot'),
      create('reboot-w6', 'worker-6', 'reboot'),
    ]);
    for (const [name, node] of [
      ['reboot-cp1', 'cp-1'],
      ['reboot-w6', 'worker-6'],
    ]) {
      const refused = await phaseIs(name, 'Refused');
      expect(refused.status?.refusal?.reason).toMatch(
        /No power channel is configured/,
      );
      expect(await unschedulable(node)).toBe(false);
    }
  });

  it('exports metrics: refusals by cause and maintenances by phase', async () => {
    // Counted after the status write and its Event: wait for the last one.
    const body = await waitFor('the refusal counters', async () => {
      const text = (await operator!.metrics.render()).body;
      return (
        /rackside_refusals_total\{cause="capability"\} 2/.test(text) && text
      );
    });
    expect(body).toMatch(/rackside_refusals_total\{cause="virtual"\} 1/);
    expect(body).toMatch(/rackside_refusals_total\{cause="busy"\} 1/);
    expect(body).toMatch(/rackside_maintenances\{phase="Complete"\} [1-9]/);
  });

  it('a second replica stands by, Ready once its caches are synced, without leading', async () => {
    const standby = await start({ identity: 'standby' });
    try {
      // Readiness is "caches synced", on every replica; leadership is separate.
      await env.waitFor('standby synced', async () => standby.isReady());
      expect(standby.isLeader()).toBe(false);
      expect(operator!.isLeader()).toBe(true);
      expect(operator!.isReady()).toBe(true);
      expect(
        (await standby.metrics.render()).body.includes('rackside_leader 0'),
      ).toBe(true);
      expect(
        (await operator!.metrics.render()).body.includes('rackside_leader 1'),
      ).toBe(true);
    } finally {
      await standby.stop();
    }
  });

  it('resumes after being stopped between the cordon and the Cordoned record', async () => {
    await operator!.stop();
    let reached!: () => void;
    const atCrashPoint = new Promise<void>(resolve => {
      reached = resolve;
    });
    operator = await start({
      identity: 'doomed',
      beforeStatusWrite: async (name, phase) => {
        if (name === 'crash-w4' && phase === 'Cordoned') {
          reached();
          await new Promise(() => {}); // never returns: the process "dies" here
        }
      },
    });
    await create('crash-w4', 'worker-4');
    await atCrashPoint;
    expect(await unschedulable('worker-4')).toBe(true);
    expect((await nms.get('crash-w4')).status?.phase).toBe('Requested');
    await operator.stop();

    operator = await start({ identity: 'successor' });
    const nm = await phaseIs('crash-w4', 'Cordoned');
    expect(nm.status?.wasUnschedulable).toBe(false);
    expect(nm.status?.history?.map(h => h.phase)).toEqual([
      'Requested',
      'Cordoned',
    ]);
    expect(await unschedulable('worker-4')).toBe(true);
  });
});

describe('the operator process', () => {
  async function freePort(): Promise<number> {
    return new Promise((resolve, reject) => {
      const server = net.createServer();
      server.once('error', reject);
      server.listen(0, '127.0.0.1', () => {
        const port = (server.address() as net.AddressInfo).port;
        server.close(() => resolve(port));
      });
    });
  }

  async function get(port: number, urlPath: string) {
    try {
      const res = await fetch(`http://127.0.0.1:${port}${urlPath}`);
      return { status: res.status, body: await res.text() };
    } catch {
      return { status: 0, body: '' };
    }
  }

  it('serves probes and metrics, acts when leading, exits on SIGTERM releasing the lease', async () => {
    await operator?.stop();
    operator = undefined;
    const port = await freePort();
    const output: string[] = [];
    const child = spawn(
      process.execPath,
      [
        '--require',
        require.resolve('@backstage/cli/config/nodeTransform.cjs'),
        path.join(__dirname, 'index.ts'),
        '--kubeconfig',
        rack.info.kubeconfig,
        '--namespace',
        NS,
        '--probe-port',
        String(port),
        '--identity',
        'child-process',
      ],
      { stdio: ['ignore', 'pipe', 'pipe'] },
    );
    child.stdout.on('data', d => output.push(String(d)));
    child.stderr.on('data', d => output.push(String(d)));
    const exited = new Promise<number | null>(resolve =>
      child.once('exit', code => resolve(code)),
    );
    try {
      await waitFor(
        '/readyz 200',
        async () => (await get(port, '/readyz')).status === 200 || undefined,
        45_000,
      ).catch(error => {
        throw new Error(`${error.message}\nchild output:\n${output.join('')}`);
      });
      expect((await get(port, '/healthz')).status).toBe(200);
      await create('child-w6', 'worker-6');
      await phaseIs('child-w6', 'Cordoned');
      const metricsText = (await get(port, '/metrics')).body;
      expect(metricsText).toMatch(
        /rackside_maintenances\{phase="Cordoned"\} [1-9]/,
      );
      child.kill('SIGTERM');
      expect(await exited).toBe(0);
      const lease = await admin
        .makeApiClient(CoordinationV1Api)
        .readNamespacedLease({ name: 'rackside-operator', namespace: NS })
        .catch(() => undefined);
      expect(lease?.spec?.holderIdentity).toBeFalsy();
    } finally {
      child.kill('SIGKILL');
    }
  }, 90_000);
});
