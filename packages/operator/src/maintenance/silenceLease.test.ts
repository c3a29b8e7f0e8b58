import type { NodeMaintenance } from '@rackside/plugin-servers-common';
import {
  AlertmanagerUnreachableError,
  type AlertmanagerApi,
  type AlertmanagerSilence,
  type AlertmanagerSilenceRequest,
} from '@rackside/plugin-servers-node';
import {
  SilenceLease,
  silenceAlternatives,
  silenceComment,
  silenceDuty,
  type SilenceSettings,
} from './silenceLease';

const settings: SilenceSettings = {
  matchers: ['node="{{node}}"', 'instance=~"{{node}}(:[0-9]+)?"'],
  silenceLeaseMs: 30 * 60_000,
  silenceRenewMs: 10 * 60_000,
  silenceMaxMs: 24 * 3_600_000,
  returnGraceMs: 5 * 60_000,
};
const T0 = Date.parse('2026-12-06T10:00:00Z');
const iso = (ms: number) => new Date(ms).toISOString();

function maintenance(status: NodeMaintenance['status']): NodeMaintenance {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name: 'nm-1', uid: 'uid-1', resourceVersion: '1' },
    spec: {
      nodeName: 'w.1',
      intent: 'reboot',
      reason: 'kernel update',
      requestedBy: 'user:default/ana',
    },
    status,
  } as NodeMaintenance;
}

describe('silenceComment', () => {
  it('names the maintenance, its intent, node and reason, its page when configured, and the marker', () => {
    const nm = maintenance(undefined);
    expect(silenceComment(nm)).toBe(
      'Rackside maintenance nm-1: reboot of w.1, reason: kernel update [rackside.dev/maintenance nm-1 uid-1]',
    );
    expect(
      silenceComment(
        nm,
        'https://backstage.example.com/servers/maintenances/prod-a/{{name}}',
      ),
    ).toBe(
      'Rackside maintenance nm-1: reboot of w.1, reason: kernel update https://backstage.example.com/servers/maintenances/prod-a/nm-1 [rackside.dev/maintenance nm-1 uid-1]',
    );
  });
});

describe('silenceDuty', () => {
  it('holds nothing before the cordon, nor for a maintenance refused at admission', () => {
    expect(
      silenceDuty(maintenance({ phase: 'Requested' }), settings, T0),
    ).toEqual({ kind: 'none' });
    // Held for approval, and withdrawn while held: never cordoned, never silenced.
    for (const status of [
      { phase: 'AwaitingApproval' as const },
      {
        phase: 'Complete' as const,
        abandoned: true,
        completedAt: new Date(T0).toISOString(),
      },
    ]) {
      expect(silenceDuty(maintenance(status), settings, T0)).toEqual({
        kind: 'none',
      });
    }
    expect(
      silenceDuty(maintenance({ phase: 'Refused' }), settings, T0),
    ).toEqual({ kind: 'none' });
  });

  it('holds from Cordoned, renewing once --silence-renew has passed', () => {
    const nm = maintenance({ phase: 'Draining', cordonedAt: iso(T0) });
    expect(silenceDuty(nm, settings, T0)).toEqual({
      kind: 'hold',
      renew: true,
      nextMs: settings.silenceRenewMs,
    });
    const renewed = maintenance({
      phase: 'Rebooting',
      cordonedAt: iso(T0),
      alerting: {
        silenceIds: ['a'],
        renewedAt: iso(T0),
        until: iso(T0 + settings.silenceLeaseMs),
      },
    });
    expect(silenceDuty(renewed, settings, T0 + 60_000)).toEqual({
      kind: 'hold',
      renew: false,
      nextMs: settings.silenceRenewMs - 60_000,
    });
    expect(
      silenceDuty(renewed, settings, T0 + settings.silenceRenewMs),
    ).toMatchObject({ kind: 'hold', renew: true });
  });

  it('holds a Complete maintenance through the return grace, then expires it', () => {
    const nm = maintenance({
      phase: 'Complete',
      cordonedAt: iso(T0),
      completedAt: iso(T0 + 60_000),
      alerting: {
        silenceIds: ['a'],
        renewedAt: iso(T0),
        until: iso(T0 + settings.silenceLeaseMs),
      },
    });
    expect(silenceDuty(nm, settings, T0 + 120_000)).toEqual({
      kind: 'hold',
      renew: false,
      nextMs: settings.returnGraceMs - 60_000,
    });
    expect(
      silenceDuty(nm, settings, T0 + 60_000 + settings.returnGraceMs),
    ).toMatchObject({ kind: 'expire' });
  });

  it('expires at once when Refused, Failed or abandoned, and never again once expired', () => {
    for (const phase of ['Refused', 'Failed'] as const) {
      expect(
        silenceDuty(
          maintenance({
            phase,
            cordonedAt: iso(T0),
            alerting: { silenceIds: ['a'] },
          }),
          settings,
          T0,
        ),
      ).toMatchObject({ kind: 'expire' });
      // Ended before Alertmanager was configured (an upgrade): left alone, nothing written.
      expect(
        silenceDuty(maintenance({ phase, cordonedAt: iso(T0) }), settings, T0),
      ).toEqual({ kind: 'none' });
    }
    expect(
      silenceDuty(
        maintenance({
          phase: 'Returning',
          cordonedAt: iso(T0),
          abandoned: true,
        }),
        settings,
        T0,
      ),
    ).toMatchObject({
      kind: 'expire',
      why: expect.stringMatching(/abandoned/),
    });
    expect(
      silenceDuty(
        maintenance({
          phase: 'Failed',
          cordonedAt: iso(T0),
          alerting: { silenceIds: ['a'], expiredAt: iso(T0) },
        }),
        settings,
        T0,
      ),
    ).toEqual({ kind: 'none' });
  });
});

describe('silenceAlternatives', () => {
  it('leaves out an alternative that would match every alert without the label', () => {
    expect(
      silenceAlternatives(
        {
          ...settings,
          matchers: ['rack="{{labels.rack}}"', 'node="{{node}}"'],
        },
        { name: 'n1' },
      ),
    ).toEqual([{ name: 'node', value: 'n1', isRegex: false, isEqual: true }]);
  });
});

/** An Alertmanager in memory: ids, updates in place, expiry; `down` makes it unreachable. */
class FakeAlertmanager implements AlertmanagerApi {
  silencesById = new Map<string, AlertmanagerSilence>();
  down = false;
  private next = 1;
  private check() {
    if (this.down)
      throw new AlertmanagerUnreachableError('connect ECONNREFUSED');
  }
  async alerts() {
    this.check();
    return [];
  }
  async silences() {
    this.check();
    return [...this.silencesById.values()];
  }
  async putSilence(request: AlertmanagerSilenceRequest) {
    this.check();
    const id = request.id ?? `s${this.next++}`;
    this.silencesById.set(id, { ...request, id, status: { state: 'active' } });
    return id;
  }
  async expireSilence(id: string) {
    this.check();
    const s = this.silencesById.get(id);
    if (s) s.status = { state: 'expired' };
  }
  live() {
    return [...this.silencesById.values()].filter(
      s => s.status.state !== 'expired',
    );
  }
}

function lease(alertmanager: FakeAlertmanager, clock: { now: number }) {
  const written: NodeMaintenance[] = [];
  const events: string[] = [];
  const errors: string[] = [];
  const silences = new SilenceLease({
    alertmanager,
    settings,
    now: () => clock.now,
    node: () => ({ metadata: { name: 'w.1', labels: {} } }),
    status: {
      async write(nm, status) {
        const next = { ...nm, status } as NodeMaintenance;
        written.push(next);
        return next;
      },
    },
    events: {
      async record(_nm, _type, reason) {
        events.push(reason);
      },
    },
    onError: operation => errors.push(operation),
  });
  return { silences, written, events, errors };
}

describe('SilenceLease', () => {
  it('creates one silence per alternative, adopts them by marker after a lost status write, and never makes two', async () => {
    const fake = new FakeAlertmanager();
    const clock = { now: T0 };
    const { silences, events } = lease(fake, clock);
    const cordoned = maintenance({ phase: 'Cordoned', cordonedAt: iso(T0) });
    const first = await silences.sync(cordoned);
    expect(fake.live()).toHaveLength(2);
    expect(first.nm.status?.alerting?.silenceIds).toHaveLength(2);
    expect(first.nm.status?.alerting?.until).toBe(
      iso(T0 + settings.silenceLeaseMs),
    );
    expect(events).toEqual(['SilenceCreated']);
    expect(fake.live()[1].matchers).toEqual([
      {
        name: 'instance',
        value: 'w\\.1(:[0-9]+)?',
        isRegex: true,
        isEqual: true,
      },
    ]);
    expect(fake.live()[0].comment).toContain(
      '[rackside.dev/maintenance nm-1 uid-1]',
    );

    // The status write was lost (a crash): the same object again adopts, creates nothing.
    const again = await silences.sync(cordoned);
    expect(fake.live()).toHaveLength(2);
    expect(again.nm.status?.alerting?.silenceIds).toEqual(
      first.nm.status?.alerting?.silenceIds,
    );
    expect(events).toEqual(['SilenceCreated']);
  });

  it("ignores a person's silence with the same matchers and a copied comment", async () => {
    const fake = new FakeAlertmanager();
    const { silences } = lease(fake, { now: T0 });
    const cordoned = maintenance({ phase: 'Cordoned', cordonedAt: iso(T0) });
    await fake.putSilence({
      matchers: [{ name: 'node', value: 'w.1', isRegex: false, isEqual: true }],
      startsAt: iso(T0),
      endsAt: iso(T0 + 3_600_000),
      createdBy: 'ana',
      comment: 'copied [rackside.dev/maintenance nm-1 uid-1]',
    });
    const { nm } = await silences.sync(cordoned);
    expect(nm.status?.alerting?.silenceIds).not.toContain('s1');
    expect(fake.live()).toHaveLength(3);
  });

  it('renews never past cordonedAt + --silence-max, and stops renewing there', async () => {
    const fake = new FakeAlertmanager();
    const clock = { now: T0 + settings.silenceMaxMs - 60_000 };
    const { silences } = lease(fake, clock);
    const { nm } = await silences.sync(
      maintenance({ phase: 'PoweredOff', cordonedAt: iso(T0) }),
    );
    expect(nm.status?.alerting?.until).toBe(iso(T0 + settings.silenceMaxMs));
    clock.now = T0 + settings.silenceMaxMs + 1;
    const past = await silences.sync(nm);
    expect(
      past.nm.status?.conditions?.find(c => c.type === 'AlertsSilenced'),
    ).toMatchObject({ status: 'False', reason: 'Expired' });
  });

  it('Alertmanager down: counted, condition False AlertmanagerUnreachable, one Event, retried at the next renewal; a lapsed silence is not waited for', async () => {
    const fake = new FakeAlertmanager();
    fake.down = true;
    const clock = { now: T0 };
    const { silences, events, errors } = lease(fake, clock);
    const result = await silences.sync(
      maintenance({ phase: 'Cordoned', cordonedAt: iso(T0) }),
    );
    expect(result.requeueAfterMs).toBe(settings.silenceRenewMs);
    expect(errors).toEqual(['list']);
    expect(result.nm.status?.conditions?.[0]).toMatchObject({
      type: 'AlertsSilenced',
      status: 'False',
      reason: 'AlertmanagerUnreachable',
    });
    const again = await silences.sync(result.nm);
    expect(events).toEqual(['AlertmanagerUnreachable']);
    expect(again.requeueAfterMs).toBe(settings.silenceRenewMs);
    expect(errors).toEqual(['list']);
    // Failed while down, nothing ever held: marked ended instead of retried forever.
    clock.now += settings.silenceRenewMs;
    const failed = await silences.sync({
      ...again.nm,
      status: { ...again.nm.status, phase: 'Failed' },
    });
    expect(failed.nm.status?.alerting?.expiredAt).toBeDefined();
    fake.down = false;
    expect(silenceDuty(failed.nm, settings, clock.now)).toEqual({
      kind: 'none',
    });
  });

  it('Alertmanager back: the next renewal silences, the condition is True again and failedAt is cleared', async () => {
    const fake = new FakeAlertmanager();
    fake.down = true;
    const clock = { now: T0 };
    const { silences, events } = lease(fake, clock);
    const down = await silences.sync(
      maintenance({ phase: 'Draining', cordonedAt: iso(T0) }),
    );
    fake.down = false;
    // Not before the retry time: no call while failedAt is recent.
    clock.now += settings.silenceRenewMs - 1;
    expect((await silences.sync(down.nm)).nm).toBe(down.nm);
    expect(fake.live()).toHaveLength(0);
    clock.now += 1;
    const back = await silences.sync(down.nm);
    expect(fake.live()).toHaveLength(2);
    expect(back.nm.status?.alerting?.failedAt ?? undefined).toBeUndefined();
    expect(
      back.nm.status?.conditions?.find(c => c.type === 'AlertsSilenced'),
    ).toMatchObject({ status: 'True', reason: 'Silenced' });
    expect(events).toEqual(['AlertmanagerUnreachable', 'SilenceCreated']);
  });

  it('recreates a silence a person expired, and expires all at the end', async () => {
    const fake = new FakeAlertmanager();
    const clock = { now: T0 };
    const { silences, events } = lease(fake, clock);
    const { nm } = await silences.sync(
      maintenance({ phase: 'Cordoned', cordonedAt: iso(T0) }),
    );
    const [gone] = nm.status!.alerting!.silenceIds;
    await fake.expireSilence(gone);
    clock.now += settings.silenceRenewMs;
    const renewed = await silences.sync(nm);
    expect(fake.live()).toHaveLength(2);
    expect(renewed.nm.status?.alerting?.silenceIds).not.toContain(gone);
    const failed = await silences.sync({
      ...renewed.nm,
      status: { ...renewed.nm.status, phase: 'Failed' },
    });
    expect(fake.live()).toHaveLength(0);
    expect(failed.nm.status?.alerting?.expiredAt).toBe(iso(clock.now));
    expect(events).toEqual([
      'SilenceCreated',
      'SilenceCreated',
      'SilenceExpired',
    ]);
  });

  it('a failure the client did not type (a raw abort mid-body) never escapes: recorded as unreachable, counted, and the maintenance goes on', async () => {
    const fake = new FakeAlertmanager();
    fake.silences = async () => {
      throw new DOMException(
        'The operation was aborted due to timeout',
        'TimeoutError',
      );
    };
    const { silences, errors, events } = lease(fake, { now: T0 });
    const result = await silences.sync(
      maintenance({ phase: 'Cordoned', cordonedAt: iso(T0) }),
    );
    expect(errors).toEqual(['list']);
    expect(events).toEqual(['AlertmanagerUnreachable']);
    expect(result.requeueAfterMs).toBe(settings.silenceRenewMs);
    expect(result.nm.status?.alerting?.failedAt).toBe(iso(T0));
    expect(
      result.nm.status?.conditions?.find(c => c.type === 'AlertsSilenced'),
    ).toMatchObject({
      status: 'False',
      reason: 'AlertmanagerUnreachable',
      message: expect.stringContaining('aborted due to timeout'),
    });
  });

  it("the lease's own status write failing never escapes either: the same object is answered, looked at again later", async () => {
    const fake = new FakeAlertmanager();
    fake.down = true;
    const logged: string[] = [];
    const nm = maintenance({ phase: 'Cordoned', cordonedAt: iso(T0) });
    const silences = new SilenceLease({
      alertmanager: fake,
      settings,
      now: () => T0,
      node: () => ({ metadata: { name: 'w.1', labels: {} } }),
      status: {
        async write() {
          throw new Error('409 Conflict');
        },
      },
      events: { async record() {} },
      onError: () => undefined,
      log: message => logged.push(message),
    });
    await expect(silences.sync(nm)).resolves.toEqual({
      nm,
      requeueAfterMs: settings.silenceRenewMs,
    });
    expect(logged[0]).toMatch(/409 Conflict.*the maintenance goes on/);
  });

  it("never adopts, shortens or expires a person's silence that copies the marker and a 'Rackside for' createdBy", async () => {
    const fake = new FakeAlertmanager();
    const clock = { now: T0 + 60_000 };
    const { silences } = lease(fake, clock);
    const copy = {
      matchers: [{ name: 'node', value: 'w.1', isRegex: false, isEqual: true }],
      endsAt: iso(T0 + 7 * 24 * 3_600_000),
      comment: 'copied [rackside.dev/maintenance nm-1 uid-1]',
    };
    // Another requester's name in createdBy, made after the cordon.
    const other = await fake.putSilence({
      ...copy,
      startsAt: iso(T0 + 30_000),
      createdBy: 'Rackside for user:default/mallory',
    });
    // The exact createdBy, but made before the cordon.
    const early = await fake.putSilence({
      ...copy,
      startsAt: iso(T0 - 60_000),
      createdBy: 'Rackside for user:default/ana',
    });
    const { nm } = await silences.sync(
      maintenance({ phase: 'Cordoned', cordonedAt: iso(T0) }),
    );
    expect(nm.status?.alerting?.silenceIds).not.toContain(other);
    expect(nm.status?.alerting?.silenceIds).not.toContain(early);
    // With ids on record, even a perfect copy made later is not ours.
    const perfect = await fake.putSilence({
      ...copy,
      startsAt: iso(clock.now + 1000),
      createdBy: 'Rackside for user:default/ana',
    });
    clock.now += settings.silenceRenewMs;
    const renewed = await silences.sync(nm);
    expect(renewed.nm.status?.alerting?.silenceIds).toEqual(
      nm.status?.alerting?.silenceIds,
    );
    const ended = await silences.sync({
      ...renewed.nm,
      status: { ...renewed.nm.status, phase: 'Failed' },
    });
    expect(ended.nm.status?.alerting?.expiredAt).toBeDefined();
    // The person's three silences are as they made them: active, their end unchanged.
    for (const id of [other, early, perfect]) {
      expect(fake.silencesById.get(id)).toMatchObject({
        status: { state: 'active' },
        endsAt: copy.endsAt,
      });
    }
    expect(
      fake
        .live()
        .map(s => s.id)
        .sort(),
    ).toEqual([other, early, perfect].sort());
  });
});
