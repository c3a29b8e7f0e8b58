/*
 * Alert gates and healthy returns (docs/alerts.md) on the simulated rack, against its real
 * Alertmanager: the tests stand in for Prometheus by posting alerts to it, so what fires,
 * what is silenced and what is resolved is Alertmanager's own behaviour. The operator runs
 * with its own ServiceAccount under the chart's admission policies, a short return grace
 * (3 s) and poll (1 s). Drain steps: no workloads, so each is done in a moment.
 */
import {
  DEFAULT_NODE_ALERT_MATCHERS,
  maintenancePlanResource,
  racksideSilenceCreatedBy,
  racksideSilenceMarker,
  type MaintenancePlan,
} from '@rackside/plugin-servers-common';
import { ResourceClient } from '@rackside/plugin-servers-node';
import { AppsV1Api, PolicyV1Api } from '@kubernetes/client-node';
import net from 'node:net';
import type { AlertingConfig } from './config';
import type { Operator } from './operator';
import { createOperatorAlertmanager } from './runtime/alertmanager';
import { startAlertmanagerProxy } from './testing/alertmanagerProxy';
import { pinnedDeployment, runningOn } from './testing/workloads';
import {
  ADMIN_USER,
  flag,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';

jest.setTimeout(300_000);

let env: OperatorRack;
let operator: Operator | undefined;
let plans: ResourceClient<MaintenancePlan>;
let alertmanagerUrl: string;

const RETURN_GRACE_MS = 3000;

function alerting(url: string): AlertingConfig {
  return {
    url,
    matchers: DEFAULT_NODE_ALERT_MATCHERS,
    silenceLeaseMs: 30 * 60_000,
    silenceRenewMs: 10 * 60_000,
    silenceMaxMs: 24 * 3600_000,
    returnGraceMs: RETURN_GRACE_MS,
  };
}

const startOperator = (url: string) =>
  env.startReady({
    drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
    alerting: {
      alertmanager: createOperatorAlertmanager(alerting(url))!,
      settings: alerting(url),
    },
    alertPollMs: 1000,
  });

type Labels = Record<string, string>;

/** Posts alerts as Prometheus would (firing until resolved; endsAt an hour ahead). */
async function fire(...labels: Labels[]) {
  await post(
    labels.map(l => ({
      labels: l,
      endsAt: new Date(Date.now() + 3600_000).toISOString(),
    })),
  );
}

/** Resolves them: the same labels with endsAt now. */
async function resolve(...labels: Labels[]) {
  await post(
    labels.map(l => ({ labels: l, endsAt: new Date().toISOString() })),
  );
}

async function post(alerts: unknown[]) {
  const res = await fetch(`${alertmanagerUrl}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(alerts),
  });
  if (!res.ok)
    throw new Error(`POST alerts: ${res.status} ${await res.text()}`);
}

const eq = (name: string, value: string) => ({
  name,
  value,
  isRegex: false,
  isEqual: true,
});

/** Creates a silence for an hour. */
async function silence(body: {
  matchers: unknown[];
  createdBy: string;
  comment: string;
}) {
  const res = await fetch(`${alertmanagerUrl}/api/v2/silences`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      ...body,
      startsAt: new Date().toISOString(),
      endsAt: new Date(Date.now() + 3600_000).toISOString(),
    }),
  });
  if (!res.ok) {
    throw new Error(`POST silences: ${res.status} ${await res.text()}`);
  }
}

/** Waits until Alertmanager lists the alert as active (or, `gone`, not at all). */
async function alertmanagerShows(alertname: string, gone = false) {
  await env.waitFor(
    `Alertmanager ${gone ? 'without' : 'with'} ${alertname}`,
    async () => {
      const res = await fetch(`${alertmanagerUrl}/api/v2/alerts`);
      const alerts = (await res.json()) as Array<{ labels: Labels }>;
      const there = alerts.some(a => a.labels.alertname === alertname);
      return there !== gone;
    },
  );
}

async function createPlan(name: string, spec: Record<string, unknown>) {
  await plans.create({
    apiVersion: maintenancePlanResource.apiVersion,
    kind: 'MaintenancePlan',
    metadata: { name },
    spec: {
      intent: 'drain',
      reason: 'kernel update',
      requestedBy: ADMIN_USER,
      ...spec,
    },
  } as any);
}

function planIs(
  name: string,
  what: string,
  test: (p: MaintenancePlan) => boolean,
  timeoutMs = 60_000,
): Promise<MaintenancePlan> {
  return env.waitFor(
    `plan ${name}: ${what}`,
    async () => {
      const plan = await plans.get(name);
      return test(plan) && plan;
    },
    timeoutMs,
  );
}

/** A port nothing listens on: bound, then closed. */
async function closedPort(): Promise<number> {
  return new Promise((done, fail) => {
    const server = net.createServer();
    server.once('error', fail);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => done(port));
    });
  });
}

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: false,
    withRedfish: false,
    withWorkloads: false,
  });
  plans = new ResourceClient<MaintenancePlan>(
    env.admin,
    maintenancePlanResource,
  );
  const info = env.rack.info.alertmanager as { url?: string } | undefined;
  if (!info?.url) {
    throw new Error(
      'the rack has no Alertmanager (rack.json alertmanager.url)',
    );
  }
  alertmanagerUrl = info.url;
  operator = await startOperator(alertmanagerUrl);
}, 600_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
});

describe('the alert gate against a real Alertmanager', () => {
  it('waits while a matching alert fires, naming it, and goes on when it resolves; a warning or another name does not hold it', async () => {
    const disk = {
      alertname: 'DiskFull',
      node: 'worker-9',
      severity: 'critical',
    };
    const noise = [
      { alertname: 'DiskFull', node: 'worker-8', severity: 'warning' },
      { alertname: 'DiskFullSoon', node: 'worker-8', severity: 'critical' },
    ];
    await fire(disk, ...noise);
    await alertmanagerShows('DiskFull');
    await createPlan('gated', {
      nodes: ['worker-1'],
      gates: { alerts: { alertnames: 'DiskFull', severities: ['critical'] } },
      healthyReturn: { healthyForSeconds: 0 },
    });
    const waiting = await planIs(
      'gated',
      'waiting on the alert gate',
      p => p.status?.waiting?.gate === 'alerts',
    );
    // The anchored name: DiskFullSoon does not match DiskFull; a warning is not critical.
    expect(waiting.status).toMatchObject({
      phase: 'Waiting',
      waiting: {
        on: 'gate',
        gate: 'alerts',
        message: 'alerts firing: DiskFull (worker-9, critical)',
      },
    });
    expect(waiting.status?.nodes?.[0]?.phase).toBe('Pending');
    expect(
      waiting.status?.conditions?.find(c => c.type === 'AlertsKnown'),
    ).toMatchObject({ status: 'True' });
    expect((await env.nms.list()).items).toHaveLength(0);

    await resolve(disk);
    const done = await planIs(
      'gated',
      'Complete once the alert resolved',
      p => p.status?.phase === 'Complete',
    );
    expect(done.status?.nodes?.[0]).toMatchObject({ phase: 'Done' });
    await resolve(...noise);
  });

  it("judges silences and inhibition as Alertmanager reports them: a person's silence holds only with includeSilenced; Rackside's own silence (one a maintenance recorded) only with ignoreSilencedByRackside false; a hand-made silence with Rackside's marker is a person's; an inhibited alert that matches holds a warning gate though the critical alert inhibiting it is outside the gate", async () => {
    const personSilenced = {
      alertname: 'GateSilencedByPerson',
      node: 'worker-7',
      severity: 'warning',
    };
    const racksideSilenced = {
      alertname: 'GateSilencedByRackside',
      node: 'worker-3',
      severity: 'warning',
    };
    const forgerySilenced = {
      alertname: 'GateSilencedByForgery',
      node: 'worker-7',
      severity: 'warning',
    };
    // The rack's inhibition rule: a critical alert of a node inhibits its warnings.
    const inhibitor = {
      alertname: 'NodeOnFire',
      node: 'worker-9',
      severity: 'critical',
    };
    const inhibited = {
      alertname: 'GateInhibited',
      node: 'worker-9',
      severity: 'warning',
    };
    await silence({
      matchers: [eq('alertname', personSilenced.alertname)],
      createdBy: 'jane',
      comment: 'known flaky disk',
    });
    // Rackside's own silence: a maintenance of worker-3 holds one per matcher template and
    // records their ids in its status (what makes a silence Rackside's).
    await env.create('m-worker-3', 'worker-3', 'cordon');
    await env.waitFor('m-worker-3 records its silences', async () => {
      const nm = await env.nms.get('m-worker-3');
      return (nm.status?.alerting?.silenceIds.length ?? 0) > 0;
    });
    // A person's silence written to look like Rackside's (createdBy and marker copied),
    // which no maintenance recorded: it is judged as a person's.
    await silence({
      matchers: [eq('alertname', forgerySilenced.alertname)],
      createdBy: racksideSilenceCreatedBy('alice'),
      comment: `maintenance of worker-7 ${racksideSilenceMarker({
        name: 'm-worker-7',
        uid: '6f1d2c7e-0000-4000-8000-000000000001',
      })}`,
    });
    await fire(
      personSilenced,
      racksideSilenced,
      forgerySilenced,
      inhibitor,
      inhibited,
    );
    await env.waitFor('Alertmanager suppresses the four', async () => {
      const res = await fetch(`${alertmanagerUrl}/api/v2/alerts`);
      const alerts = (await res.json()) as Array<{
        labels: Labels;
        status: { state: string; silencedBy: string[]; inhibitedBy: string[] };
      }>;
      const state = (name: string) =>
        alerts.find(a => a.labels.alertname === name)?.status;
      return (
        state(personSilenced.alertname)?.silencedBy.length === 1 &&
        state(racksideSilenced.alertname)?.silencedBy.length === 1 &&
        state(forgerySilenced.alertname)?.silencedBy.length === 1 &&
        (state(inhibited.alertname)?.inhibitedBy.length ?? 0) > 0
      );
    });
    await createPlan('looks-through', {
      nodes: ['worker-1'],
      gates: {
        alerts: {
          alertnames: 'GateSilenced.*',
          severities: ['warning'],
          ignoreSilencedByRackside: false,
        },
      },
      healthyReturn: { healthyForSeconds: 0 },
    });
    const held = await planIs(
      'looks-through',
      'waiting on the alert gate',
      p => p.status?.waiting?.gate === 'alerts',
    );
    // Only the maintenance's silence is looked through: the forged one is a person's.
    expect(held.status?.waiting?.message).toBe(
      'alerts firing: GateSilencedByRackside (worker-3, warning)',
    );
    // A warning-only gate: the node's critical alert (outside the gate) inhibits the
    // warning, and the warning still holds it.
    await createPlan('inhibited-holds', {
      nodes: ['worker-1'],
      gates: { alerts: { alertnames: 'Gate.*', severities: ['warning'] } },
      healthyReturn: { healthyForSeconds: 0 },
    });
    const inhibitedHeld = await planIs(
      'inhibited-holds',
      'waiting on the alert gate',
      p => p.status?.waiting?.gate === 'alerts',
    );
    expect(inhibitedHeld.status?.waiting?.message).toBe(
      'alerts firing: GateInhibited (worker-9, warning)',
    );
    expect(inhibitedHeld.status?.nodes?.[0]?.phase).toBe('Pending');
    // includeSilenced: a person's silence does not hide the alert from the gate, nor does
    // one forged to look like Rackside's.
    await createPlan('includes-silenced', {
      nodes: ['worker-1'],
      gates: {
        alerts: {
          alertnames: 'GateSilencedBy(Person|Forgery)',
          includeSilenced: true,
        },
      },
      healthyReturn: { healthyForSeconds: 0 },
    });
    expect(
      (
        await planIs(
          'includes-silenced',
          'waiting on the alert gate',
          p => p.status?.waiting?.gate === 'alerts',
        )
      ).status?.waiting?.message,
    ).toBe(
      'alerts firing: GateSilencedByForgery (worker-7, warning), GateSilencedByPerson (worker-7, warning)',
    );
    // The defaults, ignoreSilencedByRackside true and includeSilenced false: the three
    // silenced alerts hold nothing.
    await createPlan('default-ignores', {
      nodes: ['worker-5'],
      gates: {
        alerts: { alertnames: 'GateSilenced.*', severities: ['warning'] },
      },
      healthyReturn: { healthyForSeconds: 0 },
    });
    await planIs(
      'default-ignores',
      'Complete',
      p => p.status?.phase === 'Complete',
    );
    for (const name of [
      'looks-through',
      'inhibited-holds',
      'includes-silenced',
    ]) {
      await plans.patch(
        name,
        { spec: { cancel: { ...flag, at: new Date().toISOString() } } } as any,
        { type: 'merge' },
      );
      await planIs(name, 'Cancelled', p => p.status?.phase === 'Cancelled');
    }
    await resolve(
      personSilenced,
      racksideSilenced,
      forgerySilenced,
      inhibitor,
      inhibited,
    );
    await env.nms.patch(
      'm-worker-3',
      {
        spec: { returnToService: { ...flag, at: new Date().toISOString() } },
      } as any,
      { type: 'merge' },
    );
    await env.phaseIs('m-worker-3', 'Complete');
    // Its silences end after the return grace, before the next test uses worker-3.
    await env.waitFor('m-worker-3 expired its silences', async () => {
      const nm = await env.nms.get('m-worker-3');
      return nm.status?.alerting?.expiredAt !== undefined;
    });
  });

  it("a step whose node keeps an alert firing past the healthy return's timeout is Failed, naming the alert", async () => {
    const down = {
      alertname: 'NodeDown',
      node: 'worker-2',
      severity: 'critical',
    };
    await fire(down);
    await alertmanagerShows('NodeDown');
    await createPlan('unhealthy', {
      nodes: ['worker-2', 'worker-3'],
      healthyReturn: { healthyForSeconds: 0, timeoutSeconds: 60 },
    });
    // Drained at once; the return is judged after the grace and the alert holds it.
    const held = await planIs(
      'unhealthy',
      'waiting on the healthy return of worker-2',
      p =>
        p.status?.waiting?.on === 'healthyReturn' &&
        /alerts firing/.test(p.status.waiting.message),
    );
    expect(held.status?.waiting?.message).toBe(
      'worker-2: healthy return: alerts firing: NodeDown (worker-2, critical)',
    );
    expect(held.status?.nodes?.map(n => n.phase)).toEqual([
      'Running',
      'Pending',
    ]);
    // The operator restarted mid-check: the check is derived from the maintenance's record
    // and the Node, so the new one holds the same step and fails it at the same deadline.
    await operator?.stop();
    operator = await startOperator(alertmanagerUrl);
    const failed = await planIs(
      'unhealthy',
      'Failed past the timeout',
      p => p.status?.phase === 'Failed',
      120_000,
    );
    expect(failed.status?.nodes?.[0]).toMatchObject({
      name: 'worker-2',
      phase: 'Failed',
      message:
        'not healthy 60 s after it came back: alerts firing: NodeDown (worker-2, critical)',
    });
    // The failure policy (tolerate 0) applies as for any failed step.
    expect(failed.status?.nodes?.[1]).toMatchObject({
      name: 'worker-3',
      phase: 'Skipped',
    });
    expect(failed.status?.message).toContain('NodeDown (worker-2, critical)');
    await resolve(down);
  });
});

describe('an alert gate written with kubectl', () => {
  it('one whose pattern would escape its anchors is admitted by the CRD but stops the plan, starting nothing', async () => {
    // The CRD cannot compile a regex; the operator refuses it before any step starts.
    await createPlan('escape', {
      nodes: ['worker-1'],
      gates: { alerts: { alertnames: 'Nope)|(.*' } },
      healthyReturn: { healthyForSeconds: 0 },
    });
    const failed = await planIs(
      'escape',
      'Failed: the gate refused',
      p => p.status?.phase === 'Failed',
    );
    expect(failed.status?.message).toMatch(
      /^gate alerts refused: alertnames "Nope\)\|\(\.\*": not a valid (RE2 )?regular expression/,
    );
    expect(failed.status?.nodes?.[0]?.phase).toBe('Skipped');
    expect(
      (await env.nms.list()).items.filter(
        nm => nm.metadata.labels?.['rackside.dev/plan'] === 'escape',
      ),
    ).toHaveLength(0);
  });
});

describe('a pathological pattern written with kubectl (docs/limits.md, "Patterns")', () => {
  it('is judged at once by the leader: the plan goes on past a gate none of twenty 30-character alert names match', async () => {
    // V8's backtracking engine never finished `(.|.|.|.)*!` on these names: the leader froze
    // at the gate, and the next leader loaded the same plan. RE2 answers at once.
    const names = Array.from({ length: 20 }, (_, i) => ({
      alertname: `NodeFilesystemAlmostOutOfSpac${String.fromCharCode(97 + i)}`,
      node: 'worker-9',
      severity: 'info',
    }));
    await fire(...names);
    await alertmanagerShows(names[19].alertname);
    await createPlan('pathological', {
      nodes: ['worker-4'],
      gates: { alerts: { alertnames: '(.|.|.|.)*!' } },
      healthyReturn: { healthyForSeconds: 0 },
    });
    const done = await planIs(
      'pathological',
      'Complete: the gate matched none and did not stall the leader',
      p => p.status?.phase === 'Complete',
    );
    expect(done.status?.nodes?.[0]).toMatchObject({ phase: 'Done' });
    expect(
      done.status?.conditions?.find(c => c.type === 'AlertsKnown'),
    ).toMatchObject({ status: 'True' });
    await resolve(...names);
    // worker-4 back in service for the tests after this one.
    await env.nms.patch(
      'pathological-worker-4',
      {
        spec: { returnToService: { ...flag, at: new Date().toISOString() } },
      } as any,
      { type: 'merge' },
    );
    await env.phaseIs('pathological-worker-4', 'Complete');
  });

  it('one that needs backtracking (a look-ahead) stops the plan naming RE2, starting nothing', async () => {
    await createPlan('lookahead', {
      nodes: ['worker-3'],
      gates: { alerts: { alertnames: '(?=Disk)Disk.*' } },
      healthyReturn: { healthyForSeconds: 0 },
    });
    const failed = await planIs(
      'lookahead',
      'Failed: the gate refused',
      p => p.status?.phase === 'Failed',
    );
    expect(failed.status?.message).toMatch(
      /^gate alerts refused: alertnames "\(\?=Disk\)Disk\.\*": not a valid RE2 regular expression/,
    );
    expect(
      (await env.nms.list()).items.filter(
        nm => nm.metadata.labels?.['rackside.dev/plan'] === 'lookahead',
      ),
    ).toHaveLength(0);
  });
});

describe("a single maintenance's healthy return", () => {
  it('completes only after the node has been Ready for healthyForSeconds since it came back', async () => {
    await env.create('hr-1', 'worker-4', 'cordon', {
      healthyReturn: { healthyForSeconds: 6, timeoutSeconds: 60 },
    });
    await env.phaseIs('hr-1', 'Cordoned');
    await env.nms.patch(
      'hr-1',
      {
        spec: {
          returnToService: { ...flag, at: new Date().toISOString() },
        },
      } as any,
      { type: 'merge' },
    );
    const returning = await env.waitFor('hr-1 held in Returning', async () => {
      const nm = await env.nms.get('hr-1');
      return (
        nm.status?.phase === 'Returning' &&
        /^healthy return: Ready since .*, 6 s needed/.test(
          nm.status.message ?? '',
        ) &&
        nm
      );
    });
    expect(await env.unschedulable('worker-4')).toBe(false);
    // Restarted between two writes: the new operator counts from the same record.
    await operator?.stop();
    operator = await startOperator(alertmanagerUrl);
    const done = await env.phaseIs('hr-1', 'Complete', 60_000);
    const waited =
      Date.parse(done.status!.completedAt!) -
      Date.parse(returning.status!.returnedAt!);
    expect(waited).toBeGreaterThanOrEqual(6000);
    expect(done.status?.message).toBe(
      'worker-4 is schedulable and Ready, and its return healthy',
    );
  });
});

describe('Alertmanager stopped mid-plan', () => {
  const MIDWAY = 'midway-test';
  it('no new step starts: the gate holds saying the alert state is unknown, and the plan goes on once Alertmanager answers again', async () => {
    const proxy = await startAlertmanagerProxy(alertmanagerUrl);
    try {
      await operator?.stop();
      operator = await startOperator(proxy.url);
      // The first step's drain is held by a budget that allows no eviction, so the test
      // (not a race with a step that drains in a moment) decides when it ends: the plan is
      // paused while it runs, Alertmanager stops answering once it is done, and the next
      // gate is judged when the plan resumes.
      await env.core.createNamespace({ body: { metadata: { name: MIDWAY } } });
      await env.admin.makeApiClient(AppsV1Api).createNamespacedDeployment({
        namespace: MIDWAY,
        body: pinnedDeployment(MIDWAY, 'held', 'worker-3'),
      });
      const budgets = env.admin.makeApiClient(PolicyV1Api);
      await budgets.createNamespacedPodDisruptionBudget({
        namespace: MIDWAY,
        body: {
          metadata: { name: 'held', namespace: MIDWAY },
          spec: { minAvailable: 1, selector: { matchLabels: { app: 'held' } } },
        },
      });
      await runningOn(env, 'held', 'worker-3', 1, MIDWAY);
      await createPlan('midway', {
        nodes: ['worker-3', 'worker-4'],
        gates: { alerts: { alertnames: 'MidwayNothingFires' } },
        healthyReturn: { healthyForSeconds: 0 },
      });
      await planIs(
        'midway',
        'its first step draining, held by the budget',
        p => p.status?.nodes?.[0]?.phase === 'Running',
      );
      // Paused while the first step is held, then let go: it ends (its healthy return
      // reading Alertmanager) and no next gate is judged until the plan resumes.
      await plans.patch(
        'midway',
        { spec: { pause: { ...flag, at: new Date().toISOString() } } } as any,
        { type: 'merge' },
      );
      await planIs('midway', 'Paused', p => p.status?.phase === 'Paused');
      await budgets.deleteNamespacedPodDisruptionBudget({
        name: 'held',
        namespace: MIDWAY,
      });
      await planIs(
        'midway',
        'Paused with its first step Done',
        p =>
          p.status?.phase === 'Paused' &&
          p.status?.nodes?.[0]?.phase === 'Done',
      );
      proxy.mode = 'refuse';
      await plans.patch(
        'midway',
        {
          spec: {
            resume: { ...flag, at: new Date(Date.now() + 1000).toISOString() },
          },
        } as any,
        { type: 'merge' },
      );
      const held = await planIs(
        'midway',
        'held by the alert gate, the alert state unknown',
        p =>
          p.status?.waiting?.gate === 'alerts' &&
          /^alert state unknown: /.test(p.status.waiting.message),
      );
      expect(held.status?.waiting).toMatchObject({ on: 'gate' });
      expect(held.status?.nodes?.[0]?.phase).toBe('Done');
      expect(held.status?.nodes?.[1]?.phase).toBe('Pending');
      expect(
        held.status?.conditions?.find(c => c.type === 'AlertsKnown'),
      ).toMatchObject({ status: 'False', reason: 'Unknown' });
      // It stays held across several polls (every 1 s): no step for worker-4.
      const refusedBefore = proxy.refused;
      await env.waitFor(
        'three more reads of Alertmanager refused',
        async () => proxy.refused >= refusedBefore + 3,
      );
      const still = await plans.get('midway');
      expect(still.status?.waiting).toMatchObject({
        gate: 'alerts',
        since: held.status!.waiting!.since,
      });
      expect(still.status?.nodes?.[1]?.phase).toBe('Pending');
      expect(
        (await env.nms.list()).items.filter(
          nm =>
            nm.metadata.labels?.['rackside.dev/plan'] === 'midway' &&
            nm.spec.nodeName === 'worker-4',
        ),
      ).toHaveLength(0);

      proxy.mode = 'pass';
      const done = await planIs(
        'midway',
        'Complete once Alertmanager answers',
        p => p.status?.phase === 'Complete',
      );
      expect(done.status?.nodes?.map(n => n.phase)).toEqual(['Done', 'Done']);
    } finally {
      await operator?.stop();
      operator = await startOperator(alertmanagerUrl);
      await proxy.stop();
    }
  });
});

describe('Alertmanager unreachable', () => {
  it('the alert gate holds (a gate that cannot see holds), and the condition says why; whenUnknown: Proceed goes on, and its healthy return holds saying the alert state is unknown', async () => {
    await operator?.stop();
    const port = await closedPort();
    operator = await startOperator(`http://127.0.0.1:${port}`);
    // In the real Alertmanager an alert that would hold the gate fires; the operator cannot see it.
    const disk = {
      alertname: 'DiskFull',
      node: 'worker-9',
      severity: 'critical',
    };
    await fire(disk);
    await createPlan('blind', {
      nodes: ['worker-6'],
      gates: { alerts: { severities: ['critical'] } },
      healthyReturn: { healthyForSeconds: 0 },
    });
    const held = await planIs(
      'blind',
      'held: the alert state is unknown',
      p => p.status?.waiting?.gate === 'alerts',
    );
    expect(held.status?.waiting?.message).toMatch(
      /^alert state unknown: Alertmanager unreachable: .*ECONNREFUSED/,
    );
    expect(held.status?.nodes?.[0]?.phase).toBe('Pending');
    expect(
      held.status?.conditions?.find(c => c.type === 'AlertsKnown'),
    ).toMatchObject({
      status: 'False',
      reason: 'Unknown',
      message: expect.stringMatching(
        /^alert state unknown: Alertmanager unreachable: .*; the alert gate holds$/,
      ),
    });
    expect(
      (await env.nms.list()).items.filter(
        nm => nm.metadata.labels?.['rackside.dev/plan'] === 'blind',
      ),
    ).toHaveLength(0);
    await plans.patch(
      'blind',
      { spec: { cancel: { ...flag, at: new Date().toISOString() } } } as any,
      { type: 'merge' },
    );
    await planIs('blind', 'Cancelled', p => p.status?.phase === 'Cancelled');

    // The opt-in: the gate proceeds; the step's healthy return still holds on unknown.
    await createPlan('blind-proceed', {
      nodes: ['worker-6'],
      gates: { alerts: { severities: ['critical'], whenUnknown: 'Proceed' } },
      healthyReturn: { healthyForSeconds: 0 },
    });
    const returning = await planIs(
      'blind-proceed',
      'its step started, its healthy return held on unknown alerts',
      p =>
        p.status?.waiting?.on === 'healthyReturn' &&
        /alert state unknown/.test(p.status.waiting.message),
    );
    expect(returning.status?.nodes?.[0]?.phase).toBe('Running');
    expect(
      returning.status?.conditions?.find(c => c.type === 'AlertsKnown')
        ?.message,
    ).toMatch(/the gate proceeds \(whenUnknown: Proceed\)$/);
    await resolve(disk);
  });
});
