/*
 * Requests held for a second person (docs/approvals.md) on the simulated rack: the
 * operator under its own ServiceAccount and the chart's admission policies, the Backstage
 * backend's identity writing spec.approval as the backend does (held at creation, then the
 * decision), the Talos emulator counting every verb it receives.
 *
 * - A held reboot stays AwaitingApproval with its node untouched; an operator restarted
 *   while it waits keeps waiting; an approval the admin writes is refused (the chart's
 *   policy); approved by the backend, it runs (the history names the approver).
 * - An approval that expires ends Refused with nothing sent; a rejection too.
 * - A plan held for approval starts no step until it is approved.
 */
import {
  maintenancePlanResource,
  nodeMaintenanceResource,
  POWER_PROVIDER_NAME,
  type MaintenancePlan,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import { ResourceClient } from '@rackside/plugin-servers-node';
import type { Operator } from './operator';
import { startOperatorRack, type OperatorRack } from './testing/operatorRack';
import { powerRack, TALOS_PROVIDER } from './testing/powerRack';

jest.setTimeout(300_000);

/** Who asks and who approves, as the backend writes them (catalog refs). */
const REQUESTER = 'user:default/alice';
const APPROVER = 'user:default/bob';

let env: OperatorRack;
let rack: ReturnType<typeof powerRack>;
let operator: Operator | undefined;
/** Writes as the Backstage backend: the one writer of spec.approval. */
let backend: {
  nms: ResourceClient<NodeMaintenance>;
  plans: ResourceClient<MaintenancePlan>;
};

const operatorOptions = { power: { rebootSeconds: 90, unansweredSeconds: 60 } };

/** spec.approval as the backend holds a request: required, nobody decided yet. */
function held(expiresInMs: number) {
  return {
    required: true,
    rule: 'reboots-need-two',
    approvers: ['group:default/platform-oncall'],
    expiresAt: new Date(Date.now() + expiresInMs).toISOString(),
    requestedRung: 'typed-name',
  };
}

/** A reboot as the backend creates it for REQUESTER, held for approval. */
async function heldReboot(name: string, nodeName: string, expiresInMs: number) {
  await backend.nms.create({
    apiVersion: nodeMaintenanceResource.apiVersion,
    kind: 'NodeMaintenance',
    metadata: { name },
    spec: {
      nodeName,
      intent: 'reboot',
      reason: 'firmware settings',
      requestedBy: REQUESTER,
      preflight: {
        takenAt: new Date().toISOString(),
        ceremony: 'typed-name',
      },
      approval: held(expiresInMs),
    },
  } as any);
}

/** The decision written as the backend writes it: the whole approval, one field more. */
async function decide(
  client: ResourceClient<any>,
  name: string,
  decision: Record<string, string>,
) {
  const current = await client.get(name);
  await client.update({
    ...current,
    spec: {
      ...current.spec,
      approval: { ...current.spec.approval, ...decision },
    },
  });
}

const approval = () => ({
  approvedBy: APPROVER,
  approvedAt: new Date().toISOString(),
  approvedRung: 'typed-name',
});

/** How many reconciles of `controller` this operator has finished. */
async function reconciles(controller: string): Promise<number> {
  const { body } = await operator!.metrics.render();
  const line = body
    .split('\n')
    .find(l =>
      l.startsWith(
        `rackside_reconcile_duration_seconds_count{controller="${controller}"}`,
      ),
    );
  return line ? Number(line.split(' ').pop()) : 0;
}

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: false,
  });
  rack = powerRack(env);
  await rack.createPowerSecrets();
  const backstage = await env.backstageKc();
  backend = {
    nms: new ResourceClient<NodeMaintenance>(
      backstage,
      nodeMaintenanceResource,
    ),
    plans: new ResourceClient<MaintenancePlan>(
      backstage,
      maintenancePlanResource,
    ),
  };
  operator = await env.startReady(operatorOptions);
  await rack.provide(TALOS_PROVIDER);
  await env.waitFor(
    'the channel advertises reboot',
    async () =>
      (await rack.providers.get(POWER_PROVIDER_NAME)).status?.reboot === true,
  );
}, 300_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

describe('a maintenance held for approval', () => {
  it('stays AwaitingApproval with its node untouched, keeps waiting across a restart, and runs once approved', async () => {
    const before = await rack.rebootsByNode();
    await heldReboot('held-reboot', 'worker-1', 3600_000);
    const waiting = await env.phaseIs('held-reboot', 'AwaitingApproval');
    expect(waiting.status?.message).toMatch(
      /awaiting approval from group:default\/platform-oncall \(rule reboots-need-two\)/,
    );
    expect(waiting.status?.admission).toBeUndefined();
    expect(await env.eventReasons('held-reboot', ['AwaitingApproval'])).toEqual(
      ['AwaitingApproval'],
    );
    expect(await env.unschedulable('worker-1')).toBe(false);

    // A new operator: its first pass looks at every maintenance (this is the only one).
    await operator!.stop();
    operator = await env.startReady(operatorOptions);
    await env.waitFor(
      'the new operator reconciled the held maintenance',
      async () => (await reconciles('NodeMaintenance')) >= 1,
    );
    const after = await env.nms.get('held-reboot');
    expect(after.status?.phase).toBe('AwaitingApproval');
    expect(after.status?.history?.map(h => h.phase)).toEqual([
      'AwaitingApproval',
    ]);
    expect(await env.unschedulable('worker-1')).toBe(false);
    expect(await rack.rebootsByNode()).toEqual(before);

    // Nobody but the backend decides: the admin's forged approval is refused at the
    // apiserver (the chart's policy), and the maintenance is still held.
    await expect(decide(env.nms, 'held-reboot', approval())).rejects.toThrow(
      /spec\.approval is written only by the Rackside backend/,
    );
    expect((await env.nms.get('held-reboot')).spec.approval?.approvedBy).toBe(
      undefined,
    );

    await decide(backend.nms, 'held-reboot', approval());
    const done = await env.phaseIs('held-reboot', 'Complete', 180_000);
    expect(done.status?.history?.map(h => h.phase)).toEqual([
      'AwaitingApproval',
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'Rebooting',
      'Returning',
      'Complete',
    ]);
    expect(done.status?.history?.[1].message).toMatch(
      /^Approved by user:default\/bob at the typed-name rung; admitted: /,
    );
    expect((await rack.rebootsByNode())['worker-1']).toBe(
      before['worker-1'] + 1,
    );
    expect(await env.unschedulable('worker-1')).toBe(false);
  });

  it('ends Refused with nothing sent when its approval expires, or is rejected', async () => {
    const before = await rack.rebootsByNode();
    // Long enough to be seen held first; the operator looks again at the expiry.
    await heldReboot('expiring', 'worker-2', 10_000);
    await env.phaseIs('expiring', 'AwaitingApproval');
    const expired = await env.phaseIs('expiring', 'Refused', 60_000);
    expect(expired.status?.refusal?.reason).toMatch(/approval expired at /);
    expect(expired.status?.history?.map(h => h.phase)).toEqual([
      'AwaitingApproval',
      'Refused',
    ]);
    // The power channel's record: nothing sent, nothing recorded to send.
    expect(expired.status?.power).toBeUndefined();
    expect(await rack.rebootsByNode()).toEqual(before);
    expect(await env.unschedulable('worker-2')).toBe(false);

    await heldReboot('rejected', 'worker-3', 3600_000);
    await env.phaseIs('rejected', 'AwaitingApproval');
    await decide(backend.nms, 'rejected', {
      rejectedBy: APPROVER,
      rejectedAt: new Date().toISOString(),
      rejectReason: 'not during the audit',
    });
    const rejected = await env.phaseIs('rejected', 'Refused');
    expect(rejected.status?.refusal?.reason).toMatch(
      /rejected by user:default\/bob: not during the audit/,
    );
    expect(await rack.rebootsByNode()).toEqual(before);
    expect(await env.unschedulable('worker-3')).toBe(false);
    await env.waitFor('the approval refusals counted', async () =>
      /rackside_refusals_total\{cause="approval"\} 2/.test(
        (
          await operator!.metrics.render()
        ).body,
      ),
    );
  });
});

describe('a plan held for approval', () => {
  it('starts no step until it is approved, then runs them', async () => {
    const nodes = ['worker-4', 'worker-6'];
    await backend.plans.create({
      apiVersion: maintenancePlanResource.apiVersion,
      kind: 'MaintenancePlan',
      metadata: { name: 'held-plan' },
      spec: {
        intent: 'drain',
        nodes,
        reason: 'rack move',
        requestedBy: REQUESTER,
        // The healthy return's default (60 s Ready per step) is planAlerts' subject.
        healthyReturn: { healthyForSeconds: 0 },
        approval: { ...held(3600_000), requestedRung: 'preflight' },
      },
    } as any);
    const waiting = await env.waitFor(
      'held-plan AwaitingApproval',
      async () => {
        const plan = await backend.plans.get('held-plan');
        return plan.status?.phase === 'AwaitingApproval' && plan;
      },
    );
    expect(waiting.status?.message).toMatch(
      /awaiting approval from group:default\/platform-oncall .*; no step starts before/,
    );
    expect(waiting.status?.nodes?.map(s => s.phase)).toEqual([
      'Pending',
      'Pending',
    ]);
    const steps = async () =>
      (await env.nms.list({ labelSelector: 'rackside.dev/plan=held-plan' }))
        .items;
    expect(await steps()).toEqual([]);
    for (const node of nodes) {
      expect(await env.unschedulable(node)).toBe(false);
    }

    await decide(backend.plans, 'held-plan', {
      ...approval(),
      approvedRung: 'preflight',
    });
    const done = await env.waitFor(
      'held-plan Complete',
      async () => {
        const plan = await backend.plans.get('held-plan');
        return plan.status?.phase === 'Complete' && plan;
      },
      180_000,
    );
    expect(done.status?.nodes?.map(s => s.phase)).toEqual(['Done', 'Done']);
    const created = await steps();
    expect(created).toHaveLength(2);
    // The plan's approval covers its steps: none carries one, each its approved rung.
    for (const step of created) {
      expect(step.spec.approval).toBeUndefined();
      expect(step.spec.preflight?.ceremony).toBe('preflight');
    }
  });
});
