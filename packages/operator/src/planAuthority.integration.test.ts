/*
 * A plan is never lighter than a single maintenance (docs/plans.md), tried with kubectl
 * on the simulated rack: the operator under its own ServiceAccount and the chart's
 * admission policies, the Talos emulator counting every verb it receives.
 *
 * - A plan written with kubectl that reboots control-plane members at the last quorum
 *   margin: each step is Refused ("needs the hazard ceremony") and no reboot is sent.
 * - Nobody but the Backstage backend writes spec.acknowledged (a step's rung) or
 *   spec.authorization (the plan's lease).
 */
import {
  maintenancePlanResource,
  POWER_PROVIDER_NAME,
  type MaintenancePlan,
} from '@rackside/plugin-servers-common';
import { ResourceClient } from '@rackside/plugin-servers-node';
import type { Operator } from './operator';
import {
  ADMIN_USER,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';
import { powerRack, TALOS_PROVIDER } from './testing/powerRack';

jest.setTimeout(300_000);

let env: OperatorRack;
let rack: ReturnType<typeof powerRack>;
let operator: Operator | undefined;
let plans: ResourceClient<MaintenancePlan>;

function planObject(name: string, spec: Record<string, unknown>) {
  return {
    apiVersion: maintenancePlanResource.apiVersion,
    kind: 'MaintenancePlan',
    metadata: { name },
    spec: {
      intent: 'reboot',
      reason: 'etcd upgrade',
      requestedBy: ADMIN_USER,
      // The healthy return's default (60 s Ready per step) is planAlerts' subject.
      healthyReturn: { healthyForSeconds: 0 },
      ...spec,
    },
  } as any;
}

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: false,
  });
  plans = new ResourceClient<MaintenancePlan>(
    env.admin,
    maintenancePlanResource,
  );
  rack = powerRack(env);
  await rack.createPowerSecrets();
  operator = await env.startReady({
    power: { rebootSeconds: 90, unansweredSeconds: 60 },
  });
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

describe('a plan made with kubectl', () => {
  it('cannot give itself the hazard rung or a lease: only the Backstage backend writes them', async () => {
    for (const spec of [
      { nodes: ['cp-1'], acknowledged: { 'cp-1': 'hazard' } },
      {
        nodes: ['cp-1'],
        authorization: {
          by: ADMIN_USER,
          at: '2026-12-01T00:00:00Z',
          until: '2099-12-01T00:00:00Z',
        },
      },
      {
        nodes: ['cp-1'],
        acknowledgements: [
          {
            by: ADMIN_USER,
            at: '2026-12-01T00:00:00Z',
            on: 'renew',
            preflightTakenAt: '2026-12-01T00:00:00Z',
            rungs: { 'cp-1': 'hazard' },
          },
        ],
      },
    ]) {
      const field = Object.keys(spec)[1];
      await expect(
        plans.create(planObject(`forged-${field}`, spec)),
      ).rejects.toThrow(
        new RegExp(`spec\\.${field} is written only by the Backstage backend`),
      );
    }
  });

  it('reboots no control-plane member at the last margin: the step is Refused, needing the hazard ceremony, and nothing is sent', async () => {
    const before = await rack.rebootsByNode();
    await plans.create(planObject('cp-roll', { nodes: ['cp-1'] }));
    const plan = await env.waitFor(
      'plan cp-roll ends',
      async () => {
        const p = await plans.get('cp-roll');
        return ['Failed', 'Complete'].includes(p.status?.phase ?? '') && p;
      },
      120_000,
    );
    expect(plan.status?.phase).toBe('Failed');
    const step = plan.status?.nodes?.[0];
    expect(step).toMatchObject({ name: 'cp-1', phase: 'Refused' });
    expect(step?.message).toMatch(/needs the hazard ceremony/);
    const nm = await env.nms.get(step!.maintenance!);
    expect(nm.spec.preflight?.ceremony).toBe('typed-name');
    expect(nm.status?.refusal).toMatchObject({ members: 3, quorum: 2 });
    expect(await env.unschedulable('cp-1')).toBe(false);
    expect(await rack.rebootsByNode()).toEqual(before);
  });
});
