import type { MachineReclaim } from '@rackside/plugin-servers-common';
import {
  reviewMachineReclaim,
  type AccessReviewPort,
  type AdmissionRequest,
} from './decision';
import { reclaimObject, UUID } from '../testing/reclaimFixtures';

const NOW = Date.parse('2026-10-30T03:05:00Z');
const user = {
  username: 'alice',
  uid: 'u-1',
  groups: ['plant-admins'],
  extra: { scopes: ['x'] },
};

function access(allowed: boolean | Error, reason?: string) {
  const calls: unknown[] = [];
  const port: AccessReviewPort = {
    canReclaim: async (u, target) => {
      calls.push({ user: u, target });
      if (allowed instanceof Error) throw allowed;
      return { allowed, reason };
    },
  };
  return { port, calls };
}

function request(
  operation: AdmissionRequest['operation'],
  object?: MachineReclaim,
  oldObject?: MachineReclaim,
  extra: Partial<AdmissionRequest> = {},
): AdmissionRequest {
  return {
    uid: 'req-1',
    resource: {
      group: 'rackside.dev',
      version: 'v1alpha1',
      resource: 'machinereclaims',
    },
    operation,
    userInfo: user,
    namespace: 'rackside-system',
    name: operation === 'CREATE' ? undefined : 'reclaim-1',
    object,
    oldObject,
    ...extra,
  };
}

const awaiting = () =>
  reclaimObject({
    phase: 'AwaitingConfirmation',
    machineUUID: UUID,
    expiresAt: '2026-10-30T03:15:00.000Z',
  });
const confirmed = (uuid: string) => {
  const mr = awaiting();
  mr.spec = { ...mr.spec, confirmUUID: uuid };
  return mr;
};

describe('reviewMachineReclaim', () => {
  it('allows a create by a user holding the reclaim verb, asking as that user', async () => {
    const a = access(true);
    expect(
      await reviewMachineReclaim(request('CREATE', reclaimObject()), a.port),
    ).toEqual({
      allowed: true,
    });
    expect(a.calls).toEqual([
      { user, target: { namespace: 'rackside-system', name: undefined } },
    ]);
  });

  it('denies a create by a user without the verb, naming what is missing', async () => {
    const a = access(false, 'no RBAC policy matched');
    expect(
      await reviewMachineReclaim(request('CREATE', reclaimObject()), a.port),
    ).toEqual({
      allowed: false,
      code: 403,
      reason: 'Forbidden',
      message:
        'alice may not create a MachineReclaim (Reset and add): it needs the "reclaim" verb on machinereclaims.rackside.dev in namespace rackside-system (no RBAC policy matched)',
    });
  });

  it('fails closed when the access review cannot be made, and without a user', async () => {
    const a = access(new Error('connection refused'));
    expect(
      await reviewMachineReclaim(request('CREATE', reclaimObject()), a.port),
    ).toMatchObject({
      allowed: false,
      code: 500,
      message: expect.stringMatching(
        /permission check failed: connection refused/,
      ),
    });
    const b = access(true);
    expect(
      await reviewMachineReclaim(
        request('CREATE', reclaimObject(), undefined, { userInfo: {} }),
        b.port,
      ),
    ).toMatchObject({ allowed: false, code: 403 });
    expect(b.calls).toEqual([]);
  });

  it('denies a create that carries confirmUUID already', async () => {
    const mr = reclaimObject(undefined, { confirmUUID: UUID });
    expect(
      await reviewMachineReclaim(request('CREATE', mr), access(true).port),
    ).toMatchObject({
      allowed: false,
      code: 422,
      message: expect.stringMatching(/confirmUUID is set only to confirm/),
    });
  });

  it('allows a confirm with the right UUID in any case, by a user with the verb', async () => {
    const a = access(true);
    expect(
      await reviewMachineReclaim(
        request('UPDATE', confirmed(UUID.toUpperCase()), awaiting()),
        a.port,
        () => NOW,
      ),
    ).toEqual({ allowed: true });
    expect(a.calls).toEqual([
      { user, target: { namespace: 'rackside-system', name: 'reclaim-1' } },
    ]);
  });

  it('rejects a wrong typed UUID, so it can be typed again', async () => {
    expect(
      await reviewMachineReclaim(
        request(
          'UPDATE',
          confirmed('00000000-0000-4000-8000-000000000000'),
          awaiting(),
        ),
        access(true).port,
        () => NOW,
      ),
    ).toMatchObject({
      allowed: false,
      code: 422,
      message: expect.stringMatching(
        /does not match the UUID the operator read from 10\.0\.2\.191/,
      ),
    });
  });

  it('denies a confirm by a user without the verb before looking at the UUID', async () => {
    expect(
      await reviewMachineReclaim(
        request('UPDATE', confirmed(UUID), awaiting()),
        access(false).port,
        () => NOW,
      ),
    ).toMatchObject({
      allowed: false,
      code: 403,
      message: expect.stringMatching(/may not confirm/),
    });
  });

  it('rejects a confirm before the UUID is read, after the phase moved on, or after expiry', async () => {
    const pending = reclaimObject({ phase: 'Pending' });
    const refused = reclaimObject({ phase: 'Refused', machineUUID: UUID });
    const withUuid = (old: MachineReclaim) => {
      const next = structuredClone(old);
      next.spec.confirmUUID = UUID;
      return next;
    };
    expect(
      await reviewMachineReclaim(
        request('UPDATE', withUuid(pending), pending),
        access(true).port,
        () => NOW,
      ),
    ).toMatchObject({
      code: 409,
      message: expect.stringMatching(/has not read the machine's UUID yet/),
    });
    expect(
      await reviewMachineReclaim(
        request('UPDATE', withUuid(refused), refused),
        access(true).port,
        () => NOW,
      ),
    ).toMatchObject({
      code: 409,
      message: expect.stringMatching(/can no longer be confirmed/),
    });
    expect(
      await reviewMachineReclaim(
        request('UPDATE', confirmed(UUID), awaiting()),
        access(true).port,
        () => Date.parse('2026-10-30T03:15:00Z'),
      ),
    ).toMatchObject({
      code: 409,
      message: expect.stringMatching(/expired at/),
    });
  });

  it('lets other updates, status writes, deletes and other resources through without a review', async () => {
    const a = access(false);
    const relabelled = awaiting();
    relabelled.metadata.labels = { team: 'ops' };
    for (const r of [
      request('UPDATE', relabelled, awaiting()),
      request('UPDATE', confirmed(UUID), awaiting(), { subResource: 'status' }),
      request('DELETE', undefined, awaiting()),
      request('CREATE', reclaimObject(), undefined, {
        resource: {
          group: 'rackside.dev',
          version: 'v1alpha1',
          resource: 'talosmachines',
        },
      }),
    ]) {
      expect(await reviewMachineReclaim(r, a.port, () => NOW)).toEqual({
        allowed: true,
      });
    }
    expect(a.calls).toEqual([]);
  });
});
