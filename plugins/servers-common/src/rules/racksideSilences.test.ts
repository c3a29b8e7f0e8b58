import {
  alertFires,
  isRacksideSilence,
  isSilenceOfMaintenance,
  racksideSilenceCreatedBy,
  racksideSilenceMarker,
  type AlertState,
} from './racksideSilences';

const nm = { name: 'reboot-w1', uid: '0b6f-uid-1' };

describe('racksideSilences', () => {
  const ours = {
    createdBy: racksideSilenceCreatedBy('user:default/ana'),
    comment: `Rackside maintenance reboot-w1: reboot of w1 ${racksideSilenceMarker(
      nm,
    )}`,
  };

  it('finds the silence of this maintenance by its marker', () => {
    expect(ours.createdBy).toBe('Rackside for user:default/ana');
    expect(isRacksideSilence(ours)).toBe(true);
    expect(isSilenceOfMaintenance(ours, nm)).toBe(true);
  });

  it("a person's silence that copies the comment but not createdBy is not Rackside's", () => {
    const person = { ...ours, createdBy: 'ana' };
    expect(isRacksideSilence(person)).toBe(false);
    expect(isSilenceOfMaintenance(person, nm)).toBe(false);
  });

  it('another maintenance of the same name (recreated: another uid) does not adopt it', () => {
    expect(isSilenceOfMaintenance(ours, { ...nm, uid: '0b6f-uid-2' })).toBe(
      false,
    );
    expect(isSilenceOfMaintenance(ours, { ...nm, name: 'reboot-w' })).toBe(
      false,
    );
  });

  it('a comment without the marker is not ours, whoever created it', () => {
    expect(
      isRacksideSilence({
        createdBy: racksideSilenceCreatedBy('x'),
        comment: 'rackside.dev/maintenance reboot-w1',
      }),
    ).toBe(false);
  });

  describe('alertFires', () => {
    const alert = (
      state: AlertState['status']['state'],
      silencedBy: string[] = [],
      inhibitedBy: string[] = [],
    ): AlertState => ({
      labels: { node: 'w1' },
      status: { state, silencedBy, inhibitedBy },
    });
    const rackside = new Set(['s-rackside']);

    it('an active alert fires', () => {
      expect(alertFires(alert('active'), rackside, false)).toBe(true);
    });
    it('an inhibited alert does not fire', () => {
      expect(alertFires(alert('suppressed', [], ['fp']), rackside, true)).toBe(
        false,
      );
    });
    it("silenced only by Rackside: fires when looking through Rackside's silences", () => {
      const a = alert('suppressed', ['s-rackside']);
      expect(alertFires(a, rackside, true)).toBe(true);
      expect(alertFires(a, rackside, false)).toBe(false);
    });
    it("a person's silence hides it even when looking through Rackside's", () => {
      expect(
        alertFires(
          alert('suppressed', ['s-rackside', 's-person']),
          rackside,
          true,
        ),
      ).toBe(false);
    });
  });
});
