import { LeaderElector, microTime } from './leaderElection';

describe('microTime', () => {
  it('gives the six fractional digits a Lease MicroTime needs', () => {
    expect(microTime(new Date('2026-01-02T03:04:05.678Z'))).toBe(
      '2026-01-02T03:04:05.678000Z',
    );
  });
});

/** An in-memory Lease store with the apiserver's conditional update, counting calls. */
function fakeLeases() {
  let stored: any;
  let version = 0;
  const calls: string[] = [];
  const conflict = () => Object.assign(new Error('Conflict'), { code: 409 });
  const api = {
    async readNamespacedLease() {
      calls.push('read');
      if (!stored) throw Object.assign(new Error('NotFound'), { code: 404 });
      return structuredClone(stored);
    },
    async createNamespacedLease({ body }: any) {
      calls.push('create');
      if (stored) throw conflict();
      stored = {
        ...body,
        metadata: { ...body.metadata, resourceVersion: String(++version) },
      };
      return structuredClone(stored);
    },
    async replaceNamespacedLease({ body }: any) {
      calls.push('replace');
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
    kubeConfig: { makeApiClient: () => api } as any,
    get lease() {
      return stored;
    },
    /** Another replica writes the Lease (it holds it now). */
    takeOver(identity: string) {
      stored = {
        ...stored,
        metadata: { ...stored.metadata, resourceVersion: String(++version) },
        spec: { ...stored.spec, holderIdentity: identity },
      };
    },
  };
}

const until = async (what: string, check: () => boolean) => {
  for (let i = 0; i < 200 && !check(); i++) {
    await new Promise(r => setTimeout(r, 5));
  }
  if (!check()) throw new Error(`not reached: ${what}`);
};

describe('LeaderElector', () => {
  it('renews with one conditional update a period, without reading the Lease first', async () => {
    const leases = fakeLeases();
    const started = jest.fn();
    const elector = new LeaderElector({
      kubeConfig: leases.kubeConfig,
      namespace: 'ns',
      name: 'lease',
      identity: 'me',
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
      kubeConfig: leases.kubeConfig,
      namespace: 'ns',
      name: 'lease',
      identity: 'me',
      retryPeriodMs: 10,
      leaseDurationSeconds: 0.05,
      onStartedLeading: () => {},
      onStoppedLeading: stopped,
    });
    elector.start();
    await until('leading', () => elector.isLeader);
    leases.takeOver('other');
    const before = leases.calls.length;
    await until('stopped leading', () => stopped.mock.calls.length === 1);
    expect(elector.isLeader).toBe(false);
    // The conflicting update, then a read that finds the other holder.
    expect(leases.calls.slice(before, before + 2)).toEqual(['replace', 'read']);
    expect(leases.lease.spec.holderIdentity).toBe('other');
    await elector.stop();
  });
});
