import {
  alertFires,
  isAdoptableSilence,
  isRacksideSilence,
  isSilenceOfMaintenance,
  racksideSilenceCreatedBy,
  racksideSilenceIdsOf,
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

  describe('isAdoptableSilence', () => {
    const owner = {
      ...nm,
      requestedBy: 'user:default/ana',
      cordonedAt: '2026-12-06T10:00:00.000Z',
    };
    const silence = {
      ...ours,
      id: 's-ours',
      startsAt: '2026-12-06T10:00:01.000Z',
    };

    it('with ids recorded, adopts only those ids', () => {
      expect(
        isAdoptableSilence(silence, { ...owner, recordedIds: ['s-ours'] }),
      ).toBe(true);
      // A perfect copy under another id: not adopted, so never renewed or expired.
      expect(
        isAdoptableSilence(
          { ...silence, id: 's-copy' },
          { ...owner, recordedIds: ['s-ours'] },
        ),
      ).toBe(false);
    });

    it('with none recorded (the status write was lost), adopts by exact createdBy, marker with the own uid, and a start after the cordon', () => {
      expect(isAdoptableSilence(silence, owner)).toBe(true);
      expect(isAdoptableSilence(silence, { ...owner, recordedIds: [] })).toBe(
        true,
      );
    });

    it("a person's silence that copies the marker and a createdBy starting with 'Rackside for ' is not adopted", () => {
      // Another requester in createdBy.
      expect(
        isAdoptableSilence(
          { ...silence, createdBy: 'Rackside for user:default/mallory' },
          owner,
        ),
      ).toBe(false);
      // Made before the cordon: it existed before the maintenance held anything.
      expect(
        isAdoptableSilence(
          { ...silence, startsAt: '2026-12-06T09:59:59.000Z' },
          owner,
        ),
      ).toBe(false);
      // The marker names another uid: the uid comes from the object, not the comment.
      expect(
        isAdoptableSilence(
          {
            ...silence,
            comment: racksideSilenceMarker({ ...nm, uid: 'guessed' }),
          },
          owner,
        ),
      ).toBe(false);
      // No cordon on record: nothing of this maintenance can be adopted by marker.
      expect(
        isAdoptableSilence(silence, { ...owner, cordonedAt: undefined }),
      ).toBe(false);
    });
  });

  describe('racksideSilenceIdsOf', () => {
    const recorded = { ...ours, id: 's-recorded' };
    const maintenances = [
      { status: { alerting: { silenceIds: ['s-recorded'] } } },
      { status: {} },
      {},
    ];

    it("a silence a maintenance recorded in status.alerting.silenceIds is Rackside's", () => {
      expect([...racksideSilenceIdsOf([recorded], maintenances)]).toEqual([
        's-recorded',
      ]);
    });

    it("a forged silence (Rackside's marker, createdBy 'Rackside for alice', an id no maintenance recorded) is a person's", () => {
      const forged = {
        id: 's-forged',
        createdBy: racksideSilenceCreatedBy('alice'),
        comment: racksideSilenceMarker(nm),
      };
      expect(isRacksideSilence(forged)).toBe(true); // it looks like ours…
      const ids = racksideSilenceIdsOf([recorded, forged], maintenances);
      expect(ids.has('s-forged')).toBe(false); // …but no maintenance holds it
      expect(ids.has('s-recorded')).toBe(true);
      expect(racksideSilenceIdsOf([forged], []).size).toBe(0);
    });

    it("a recorded id whose silence a person rewrote without Rackside's marker is a person's", () => {
      const rewritten = { ...recorded, comment: 'mine now' };
      expect(racksideSilenceIdsOf([rewritten], maintenances).size).toBe(0);
    });

    it('a recorded id Alertmanager no longer lists is not in the set', () => {
      expect(racksideSilenceIdsOf([], maintenances).size).toBe(0);
    });
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
    const plain = { throughRacksideSilences: false };
    const through = { throughRacksideSilences: true };

    it('an active alert fires', () => {
      expect(alertFires(alert('active'), rackside, plain)).toBe(true);
    });
    it('an inhibited alert fires: inhibition saves a page, the alert is still true', () => {
      expect(alertFires(alert('suppressed', [], ['fp']), rackside, plain)).toBe(
        true,
      );
    });
    it("silenced only by Rackside: fires when looking through Rackside's silences", () => {
      const a = alert('suppressed', ['s-rackside']);
      expect(alertFires(a, rackside, through)).toBe(true);
      expect(alertFires(a, rackside, plain)).toBe(false);
    });
    it("a person's silence hides it unless the look includes silenced alerts", () => {
      const a = alert('suppressed', ['s-rackside', 's-person']);
      expect(alertFires(a, rackside, through)).toBe(false);
      expect(
        alertFires(a, rackside, { ...through, throughPersonSilences: true }),
      ).toBe(true);
      // Looking through a person's silence does not look through Rackside's.
      expect(
        alertFires(a, rackside, { ...plain, throughPersonSilences: true }),
      ).toBe(false);
    });
    it("an inhibited alert a person silenced is hidden by the person's silence", () => {
      expect(
        alertFires(alert('suppressed', ['s-person'], ['fp']), rackside, plain),
      ).toBe(false);
    });
  });
});
