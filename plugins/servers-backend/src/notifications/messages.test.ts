import { fakeMaintenance } from '../testing/fakeCluster';
import type { MaintenanceObject } from '../cluster/types';
import { maintenanceOutcome } from './messages';

const AT = '2026-12-02T02:00:00Z';
const BY = { by: 'user:default/ada', reason: 'not tonight', at: AT };

function reboot(
  history: string[],
  extra: Partial<MaintenanceObject['spec']> = {},
  power?: { sentAt: string },
): MaintenanceObject {
  const m = fakeMaintenance(
    'worker-1-reboot',
    'worker-1',
    'reboot',
    undefined,
    {
      requestedBy: 'user:default/ada',
      reason: 'kernel update',
      ...extra,
    },
  );
  return {
    ...m,
    status: {
      phase: 'Complete',
      history: history.map(phase => ({ phase, at: AT })),
      ...(power ? { power: { reboot: power } } : {}),
    } as MaintenanceObject['status'],
  };
}

describe('the requester is told what happened, not only that it ended', () => {
  it('a reboot returned to service before its verb says no reboot was done', () => {
    const early = maintenanceOutcome(
      'plant-a',
      reboot(['Requested', 'Cordoned', 'Draining', 'Returning', 'Complete'], {
        returnToService: BY,
      }),
    );
    expect(early?.title).toBe(
      'The reboot of worker-1 (plant-a) ended without the reboot',
    );
    expect(early?.description).toContain(
      'worker-1 is back in service, but no reboot was done: returned to service before the reboot',
    );
  });

  it('a reboot that was sent and came back is complete', () => {
    const done = maintenanceOutcome(
      'plant-a',
      reboot(
        [
          'Requested',
          'Cordoned',
          'Draining',
          'Drained',
          'Rebooting',
          'Returning',
          'Complete',
        ],
        {},
        { sentAt: AT },
      ),
    );
    expect(done?.title).toBe('The reboot of worker-1 (plant-a) is complete');
  });
});
