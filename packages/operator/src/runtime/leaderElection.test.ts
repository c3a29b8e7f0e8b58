import { KubeConfig } from '@kubernetes/client-node';
import {
  LeaderElector,
  leaderGated,
  leaderGatedKubeConfig,
  microTime,
  NotLeadingError,
  type Lease,
  type LeaseStore,
} from './leaderElection';

describe('microTime', () => {
  it('gives the six fractional digits a Lease MicroTime needs', () => {
    expect(microTime(new Date('2026-01-02T03:04:05.678Z'))).toBe(
      '2026-01-02T03:04:05.678000Z',
    );
  });
});

/** An in-memory Lease store with the apiserver's conditional update, counting calls. */
function fakeLeases() {
  let stored: Lease | undefined;
  let version = 0;
  const calls: string[] = [];
  /** When set, replace() hangs until its signal aborts. */
  let hang = false;
  const conflict = () => Object.assign(new Error('Conflict'), { code: 409 });
  const hanging = (signal: AbortSignal) =>
    new Promise<never>((_, reject) =>
      signal.addEventListener('abort', () => reject(new Error('aborted')), {
        once: true,
      }),
    );
  const store: LeaseStore = {
    async read() {
      calls.push('read');
      return stored && structuredClone(stored);
    },
    async create(body) {
      calls.push('create');
      if (stored) throw conflict();
      stored = {
        ...body,
        metadata: { ...body.metadata, resourceVersion: String(++version) },
      };
      return structuredClone(stored);
    },
    async replace(body, signal) {
      calls.push('replace');
      if (hang) return hanging(signal);
      if (body.metadata?.resourceVersion !== stored?.metadata?.resourceVersion)
        throw conflict();
      stored = {
        ...body,
        metadata: { ...body.metadata, resourceVersion: String(++version) },
      };
      return structuredClone(stored);
    },
  };
  return {
    calls,
    store,
    get lease() {
      return stored;
    },
    hang(on: boolean) {
      hang = on;
    },
    /** Another replica writes the Lease (it holds it now). */
    takeOver(identity: string) {
      stored = {
        ...stored!,
        metadata: { ...stored!.metadata, resourceVersion: String(++version) },
        spec: { ...stored!.spec, holderIdentity: identity },
      };
    },
  };
}

const until = async (what: string, check: () => boolean) => {
  for (let i = 0; i < 400 && !check(); i++) {
    await new Promise(r => setTimeout(r, 5));
  }
  if (!check()) throw new Error(`not reached: ${what}`);
};

const base = { namespace: 'ns', name: 'lease', identity: 'me' };

describe('LeaderElector', () => {
  it('renews with one conditional update a period, without reading the Lease first', async () => {
    const leases = fakeLeases();
    const started = jest.fn();
    const elector = new LeaderElector({
      ...base,
      store: leases.store,
      retryPeriodMs: 10,
      onStartedLeading: started,
      onStoppedLeading: () => {},
    });
    elector.start();
    await until('leading', () => elector.isLeader);
    expect(leases.calls.slice(0, 2)).toEqual(['read', 'create']);
    await until('five renewals', () => leases.calls.length >= 7);
    await elector.stop();
    const renewals = leases.calls.slice(2, 7);
    expect(renewals).toEqual(Array(5).fill('replace'));
    expect(started).toHaveBeenCalledTimes(1);
  });

  it('reads the Lease when its update conflicts, and stops leading once another holds it', async () => {
    const leases = fakeLeases();
    const stopped = jest.fn();
    const elector = new LeaderElector({
      ...base,
      store: leases.store,
      retryPeriodMs: 10,
      onStartedLeading: () => {},
      onStoppedLeading: stopped,
    });
    elector.start();
    await until('leading', () => elector.isLeader);
    leases.takeOver('other');
    const before = leases.calls.length;
    await until('stopped leading', () => stopped.mock.calls.length === 1);
    expect(elector.isLeader).toBe(false);
    expect(stopped.mock.calls[0][0]).toMatch(/held by other/);
    // The conflicting update, then a read that finds the other holder.
    expect(leases.calls.slice(before, before + 2)).toEqual(['replace', 'read']);
    expect(leases.lease?.spec?.holderIdentity).toBe('other');
    await elector.stop();
  });

  it('is not leading the moment its renew deadline has passed, even when no timer ran (a frozen process resumed), and never writes the Lease again', async () => {
    const leases = fakeLeases();
    let clock = 0;
    const stopped = jest.fn();
    const elector = new LeaderElector({
      ...base,
      store: leases.store,
      leaseDurationMs: 15_000,
      renewDeadlineMs: 10_000,
      retryPeriodMs: 9_000, // real time: no renewal happens on its own in this test
      now: () => clock,
      onStartedLeading: () => {},
      onStoppedLeading: stopped,
    });
    elector.start();
    await until('leading', () => elector.isLeader);
    const calls = leases.calls.length;
    clock = 9_999;
    expect(elector.isLeader).toBe(true);
    // The process "was stopped" for longer than the renew deadline: nothing ran meanwhile.
    clock = 10_000;
    expect(elector.isLeader).toBe(false);
    await until('told', () => stopped.mock.calls.length === 1);
    expect(stopped.mock.calls[0][0]).toMatch(/renew deadline passed/);
    // Once past it, never again; and stop() does not touch the Lease it no longer leads.
    clock = 0;
    expect(elector.isLeader).toBe(false);
    await elector.stop();
    expect(leases.calls.length).toBe(calls);
    expect(stopped).toHaveBeenCalledTimes(1);
  });

  it('aborts a hung renewal at its own timeout, retries, and gives up at the deadline', async () => {
    const leases = fakeLeases();
    const stopped = jest.fn();
    const logs: string[] = [];
    const elector = new LeaderElector({
      ...base,
      store: leases.store,
      leaseDurationMs: 600,
      renewDeadlineMs: 300,
      retryPeriodMs: 20,
      attemptTimeoutMs: 50,
      log: m => logs.push(m),
      onStartedLeading: () => {},
      onStoppedLeading: stopped,
    });
    elector.start();
    await until('leading', () => elector.isLeader);
    leases.hang(true);
    const hungAt = performance.now();
    await until('stopped leading', () => stopped.mock.calls.length === 1);
    const took = performance.now() - hungAt;
    expect(elector.isLeader).toBe(false);
    // Several attempts, each cut at 50 ms, before the 300 ms deadline ended it.
    expect(logs.filter(l => /attempt timed out after/.test(l)).length).toBe(
      logs.filter(l => /timed out/.test(l)).length,
    );
    expect(
      logs.filter(l => /attempt timed out after/.test(l)).length,
    ).toBeGreaterThanOrEqual(2);
    expect(took).toBeLessThan(600);
    await elector.stop();
  });

  it('hands over: not leading before the release goes out, the holder cleared, a peer takes it, and it never campaigns again', async () => {
    const leases = fakeLeases();
    const stopped = jest.fn();
    let leadingWhenReleased: boolean | undefined;
    /** Every request this replica made to the Lease. */
    let requests = 0;
    const elector = new LeaderElector({
      ...base,
      store: {
        read: signal => {
          requests++;
          return leases.store.read(signal);
        },
        create: (lease, signal) => {
          requests++;
          return leases.store.create(lease, signal);
        },
        replace: async (lease, signal) => {
          requests++;
          if (!lease.spec?.holderIdentity) {
            leadingWhenReleased = elector.isLeader;
          }
          return leases.store.replace(lease, signal);
        },
      },
      retryPeriodMs: 10,
      onStartedLeading: () => {},
      onStoppedLeading: stopped,
    });
    elector.start();
    await until('leading', () => elector.isLeader);
    expect(await elector.handOver('worker-3 is this replica’s node')).toBe(
      true,
    );
    expect(leadingWhenReleased).toBe(false);
    const requestsAtHandover = requests;
    expect(elector.isLeader).toBe(false);
    expect(leases.lease?.spec?.holderIdentity).toBeUndefined();
    expect(stopped).toHaveBeenCalledWith(
      'handed over: worker-3 is this replica’s node',
    );
    // A peer campaigning now takes the released Lease at once.
    const peer = new LeaderElector({
      ...base,
      identity: 'peer',
      store: leases.store,
      retryPeriodMs: 10,
      onStartedLeading: () => {},
      onStoppedLeading: () => {},
    });
    peer.start();
    await until('the peer leads', () => peer.isLeader);
    expect(leases.lease?.spec?.holderIdentity).toBe('peer');
    // The one that handed over asks nothing more of the Lease (it does not campaign
    // again: main restarts it) and does not hand over twice. Five retry periods.
    await new Promise(r => setTimeout(r, 50));
    expect(await elector.handOver('again')).toBe(false);
    expect(requests).toBe(requestsAtHandover);
    await peer.stop();
    expect(elector.isLeader).toBe(false);
    expect(stopped).toHaveBeenCalledTimes(1);
  });

  it('a replica that does not lead hands nothing over and writes nothing', async () => {
    const leases = fakeLeases();
    const elector = new LeaderElector({
      ...base,
      store: leases.store,
      onStartedLeading: () => {},
      onStoppedLeading: () => {},
    });
    expect(await elector.handOver('not leading')).toBe(false);
    expect(leases.calls).toEqual([]);
  });

  it('refuses a renew deadline that is not shorter than the lease duration', () => {
    expect(
      () =>
        new LeaderElector({
          ...base,
          store: fakeLeases().store,
          leaseDurationMs: 10_000,
          renewDeadlineMs: 10_000,
          onStartedLeading: () => {},
          onStoppedLeading: () => {},
        }),
    ).toThrow(/renew deadline \(10000 ms\) must be shorter than the lease/);
  });
});

describe('the leader gate', () => {
  const kubeConfig = () => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        { name: 'c', server: 'http://127.0.0.1:1', skipTLSVerify: true },
      ],
      users: [{ name: 'u', token: 't' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
    return kc;
  };

  it('lets reads through on every replica and refuses writes unless leading at that moment', async () => {
    let leading = false;
    const gated = leaderGatedKubeConfig(kubeConfig(), () => leading);
    await expect(
      gated.applyToHTTPSOptions({ method: 'GET', headers: {} }),
    ).resolves.toBeUndefined();
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      await expect(
        gated.applyToHTTPSOptions({ method, headers: {} }),
      ).rejects.toBeInstanceOf(NotLeadingError);
    }
    leading = true;
    const options: any = { method: 'PATCH', headers: {} };
    await gated.applyToHTTPSOptions(options);
    // The credentials of the real config still reach the request.
    expect(options.headers.Authorization).toBe('Bearer t');
    expect(gated.getCurrentCluster()?.server).toBe('http://127.0.0.1:1');
  });

  it('gates the named methods of a port and leaves the others', async () => {
    let leading = false;
    const port = {
      send: jest.fn(async () => 'sent'),
      read: jest.fn(async () => 'read'),
    };
    const gated = leaderGated(port, ['send'], () => leading);
    await expect(gated.send()).rejects.toBeInstanceOf(NotLeadingError);
    expect(port.send).not.toHaveBeenCalled();
    await expect(gated.read()).resolves.toBe('read');
    leading = true;
    await expect(gated.send()).resolves.toBe('sent');
  });
});
