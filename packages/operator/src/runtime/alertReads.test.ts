import {
  alertGateVerdict,
  racksideSilenceCreatedBy,
  racksideSilenceMarker,
  type SilenceRecorder,
} from '@rackside/plugin-servers-common';
import type {
  AlertmanagerAlert,
  AlertmanagerApi,
  AlertmanagerSilence,
} from '@rackside/plugin-servers-node';
import { createAlertReads } from './alertReads';

const alerting = { matchers: ['node="{{node}}"'], returnGraceMs: 0 };

function silence(id: string, requester: string): AlertmanagerSilence {
  return {
    id,
    matchers: [{ name: 'node', value: 'w1', isRegex: false, isEqual: true }],
    startsAt: '2026-12-06T10:00:00.000Z',
    endsAt: '2026-12-06T12:00:00.000Z',
    createdBy: racksideSilenceCreatedBy(requester),
    comment: `Rackside maintenance reboot-w1 ${racksideSilenceMarker({
      name: 'reboot-w1',
      uid: 'uid-1',
    })}`,
    status: { state: 'active' },
  };
}

function silencedAlert(silenceId: string): AlertmanagerAlert {
  return {
    fingerprint: `fp-${silenceId}`,
    labels: { alertname: 'NodeDown', node: 'w1', severity: 'critical' },
    startsAt: '2026-12-06T10:00:00.000Z',
    status: { state: 'suppressed', silencedBy: [silenceId], inhibitedBy: [] },
  };
}

function alertmanagerWith(
  alerts: AlertmanagerAlert[],
  silences: AlertmanagerSilence[],
): AlertmanagerApi {
  return {
    alerts: async () => alerts,
    silences: async () => silences,
    putSilence: async () => {
      throw new Error('reads only');
    },
    expireSilence: async () => {
      throw new Error('reads only');
    },
  };
}

describe('createAlertReads', () => {
  // The maintenance reboot-w1 recorded the silence it holds; nobody recorded 's-forged'.
  const maintenances: SilenceRecorder[] = [
    { status: { alerting: { silenceIds: ['s-recorded'] } } },
  ];

  it("a silence a maintenance recorded is Rackside's: a gate with includeSilenced is not held by it", async () => {
    const reads = createAlertReads(
      alertmanagerWith(
        [silencedAlert('s-recorded')],
        [silence('s-recorded', 'user:default/ana')],
      ),
      alerting,
      () => maintenances,
    )!;
    const snapshot = await reads.snapshot();
    if (!snapshot.known) throw new Error(snapshot.reason);
    expect(snapshot.racksideSilenceIds.has('s-recorded')).toBe(true);
    // ignoreSilencedByRackside (default): the maintenance's own silence does not hold it.
    expect(alertGateVerdict({ includeSilenced: true }, snapshot)).toMatchObject(
      { holds: false },
    );
  });

  it("a forged silence (Rackside's marker, createdBy 'Rackside for alice', recorded by no maintenance) does not let an alert past a gate that includes silenced alerts", async () => {
    const reads = createAlertReads(
      alertmanagerWith(
        [silencedAlert('s-forged')],
        [
          silence('s-recorded', 'user:default/ana'),
          silence('s-forged', 'alice'),
        ],
      ),
      alerting,
      () => maintenances,
    )!;
    const snapshot = await reads.snapshot();
    if (!snapshot.known) throw new Error(snapshot.reason);
    expect([...snapshot.racksideSilenceIds]).toEqual(['s-recorded']);
    // A person's silence holds a gate that includes silenced alerts, forged marker or not.
    expect(alertGateVerdict({ includeSilenced: true }, snapshot)).toMatchObject(
      {
        holds: true,
        message: expect.stringContaining('NodeDown'),
      },
    );
  });

  it('reads the maintenances at each snapshot: an id recorded later counts from then on', async () => {
    const recorded: SilenceRecorder[] = [];
    const reads = createAlertReads(
      alertmanagerWith(
        [silencedAlert('s-new')],
        [silence('s-new', 'user:default/ana')],
      ),
      alerting,
      () => recorded,
    )!;
    const before = await reads.snapshot();
    if (!before.known) throw new Error(before.reason);
    expect(before.racksideSilenceIds.has('s-new')).toBe(false);
    recorded.push({ status: { alerting: { silenceIds: ['s-new'] } } });
    const after = await reads.snapshot();
    if (!after.known) throw new Error(after.reason);
    expect(after.racksideSilenceIds.has('s-new')).toBe(true);
  });
});
