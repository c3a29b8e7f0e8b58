import type { MaintenancePlan } from '@rackside/plugin-servers-common';
import { stepObject } from './reconciler';

describe('a step after a renewal', () => {
  it("starts under the renewer's acknowledgement: their rung and their pre-flight's time", () => {
    const plan = {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'MaintenancePlan',
      metadata: {
        name: 'reboot-plan-1',
        uid: 'u1',
        creationTimestamp: '2026-12-01T00:00:00Z',
        annotations: {
          'rackside.dev/preflight-taken-at': '2026-11-30T23:59:00Z',
        },
      },
      spec: {
        intent: 'reboot',
        nodes: ['worker-1', 'cp-1'],
        maxParallel: 1,
        failurePolicy: { tolerate: 0 },
        onCancel: 'finish',
        reason: 'kernel update',
        requestedBy: 'user:default/creator',
        acknowledged: { 'worker-1': 'typed-name', 'cp-1': 'hazard' },
        acknowledgements: [
          {
            by: 'user:default/creator',
            at: '2026-12-01T00:00:00Z',
            on: 'create',
            preflightTakenAt: '2026-11-30T23:59:00Z',
            rungs: { 'worker-1': 'typed-name', 'cp-1': 'hazard' },
          },
          {
            by: 'user:default/renewer',
            at: '2026-12-03T00:00:00Z',
            on: 'renew',
            preflightTakenAt: '2026-12-02T23:58:00Z',
            rungs: { 'cp-1': 'hazard' },
          },
        ],
      },
    } as unknown as MaintenancePlan;
    const step = (name: string) =>
      stepObject(
        plan,
        { name, controlPlane: false, phase: 'Pending' },
        `m-${name}`,
      ).spec.preflight;
    // What was seen: every step carried the creation's pre-flight time, whoever renewed.
    expect(step('cp-1')).toEqual({
      takenAt: '2026-12-02T23:58:00Z',
      ceremony: 'hazard',
    });
    expect(step('worker-1')).toEqual({
      takenAt: '2026-11-30T23:59:00Z',
      ceremony: 'typed-name',
    });
  });
});
