import {
  RECLAIM_ADDED_ADDRESSES_ANNOTATION,
  type MachineReclaim,
  type MachineReclaimPhase,
  type TalosCluster,
  type TalosMachine,
} from '@rackside/plugin-servers-common';
import {
  addressReleasePatch,
  planAddressRelease,
  releaseReclaimAddresses,
  sameAddress,
  type AddressCleanupPorts,
} from './addressCleanup';

const NS = 'rackside-system';

function cluster(addresses: string[], recorded?: string[]): TalosCluster {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'TalosCluster',
    metadata: {
      name: 'plant-a',
      namespace: NS,
      resourceVersion: '7',
      annotations: recorded
        ? { [RECLAIM_ADDED_ADDRESSES_ANNOTATION]: recorded.join(',') }
        : undefined,
    },
    spec: {
      discovery: { addresses, intervalSeconds: 300 },
      joinConfigSecretRef: { name: 'join', key: 'config.yaml' },
      talosconfigSecretRef: { name: 'tc', key: 'talosconfig' },
    },
  } as TalosCluster;
}

function reclaim(
  address: string,
  phase?: MachineReclaimPhase,
  targetCluster = 'plant-a',
): MachineReclaim {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MachineReclaim',
    metadata: { name: `r-${address}-${phase}`, namespace: NS },
    spec: {
      address,
      targetCluster,
      credentialSecretRef: { name: 's', key: 'talosconfig' },
      ttlMinutes: 15,
    },
    status: phase ? { phase } : undefined,
  } as MachineReclaim;
}

function machine(address: string, clusterName = 'plant-a'): TalosMachine {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'TalosMachine',
    metadata: { name: '00000000-0000-0000-0000-000000000001', namespace: NS },
    spec: { cluster: clusterName },
    status: { phase: 'Pending', address },
  } as TalosMachine;
}

describe('planAddressRelease', () => {
  it('does nothing without recorded addresses: a user-listed address is never touched', () => {
    expect(
      planAddressRelease(
        cluster(['10.0.0.1']),
        [reclaim('10.0.0.1', 'Failed')],
        [],
      ),
    ).toBeUndefined();
  });

  it('releases an address of a failed, expired, refused or deleted request', () => {
    const c = cluster(
      ['10.0.0.1', '10.0.0.5', '10.0.0.6', '10.0.0.7', '10.0.0.8'],
      ['10.0.0.5', '10.0.0.6', '10.0.0.7', '10.0.0.8'],
    );
    const plan = planAddressRelease(
      c,
      [
        reclaim('10.0.0.5', 'Failed'),
        reclaim('10.0.0.6', 'Expired'),
        reclaim('10.0.0.7', 'Refused'),
        // 10.0.0.8: its request was deleted
      ],
      [],
    );
    expect(plan).toEqual({
      released: ['10.0.0.5', '10.0.0.6', '10.0.0.7', '10.0.0.8'],
      addresses: ['10.0.0.1'],
      annotation: undefined,
    });
  });

  it.each([
    [undefined],
    ['Pending'],
    ['AwaitingConfirmation'],
    ['Resetting'],
    ['WaitingForMaintenance'],
    ['Done'],
  ] as const)('keeps the address of a request in %s', phase => {
    expect(
      planAddressRelease(
        cluster(['10.0.0.5'], ['10.0.0.5']),
        [reclaim('10.0.0.5', 'Failed'), reclaim('10.0.0.5:50000', phase)],
        [],
      ),
    ).toBeUndefined();
  });

  it('keeps an address a TalosMachine of the cluster is at', () => {
    expect(
      planAddressRelease(
        cluster(['10.0.0.5'], ['10.0.0.5']),
        [reclaim('10.0.0.5', 'Failed')],
        [machine('10.0.0.5')],
      ),
    ).toBeUndefined();
  });

  it('ignores requests and machines of other clusters', () => {
    expect(
      planAddressRelease(
        cluster(['10.0.0.5'], ['10.0.0.5']),
        [reclaim('10.0.0.5', 'Pending', 'plant-b')],
        [machine('10.0.0.5', 'plant-b')],
      ),
    ).toMatchObject({ released: ['10.0.0.5'], addresses: [] });
  });

  it('forgets a recorded address the list no longer holds, removing nothing', () => {
    expect(
      planAddressRelease(
        cluster(['10.0.0.1', '10.0.0.6'], ['10.0.0.5', '10.0.0.6']),
        [reclaim('10.0.0.6', 'Pending')],
        [],
      ),
    ).toEqual({
      released: [],
      addresses: ['10.0.0.1', '10.0.0.6'],
      annotation: '10.0.0.6',
    });
  });
});

describe('sameAddress', () => {
  it('treats the default port as the same address', () => {
    expect(sameAddress('10.0.0.5', '10.0.0.5:50000')).toBe(true);
    expect(sameAddress('10.0.0.5', '10.0.0.6')).toBe(false);
    expect(sameAddress(undefined, '10.0.0.5')).toBe(false);
  });
});

describe('releaseReclaimAddresses', () => {
  function ports(overrides: Partial<AddressCleanupPorts> = {}) {
    const order: string[] = [];
    const base: AddressCleanupPorts = {
      getCluster: jest.fn(async () => {
        order.push('cluster');
        return cluster(['10.0.0.1', '10.0.0.5'], ['10.0.0.5']);
      }),
      listReclaims: jest.fn(async () => {
        order.push('reclaims');
        return [reclaim('10.0.0.5', 'Failed')];
      }),
      listMachines: jest.fn(async () => {
        order.push('machines');
        return [];
      }),
      writeCluster: jest.fn(async () => {
        order.push('write');
      }),
    };
    return { ports: { ...base, ...overrides }, order };
  }

  it('reads the cluster before the requests, then writes once', async () => {
    const { ports: p, order } = ports();
    await expect(releaseReclaimAddresses(p, NS, 'plant-a')).resolves.toEqual([
      '10.0.0.5',
    ]);
    expect(order.slice(0, 1)).toEqual(['cluster']);
    expect(order[order.length - 1]).toBe('write');
    expect(p.writeCluster).toHaveBeenCalledTimes(1);
  });

  it('retries on a conflict with fresh reads, then gives up', async () => {
    const write = jest.fn(async () => {
      throw new Error('409 conflict');
    });
    const { ports: p } = ports({ writeCluster: write });
    await expect(releaseReclaimAddresses(p, NS, 'plant-a', 2)).rejects.toThrow(
      /409/,
    );
    expect(write).toHaveBeenCalledTimes(2);
    expect(p.getCluster).toHaveBeenCalledTimes(2);
  });

  it('does not write when nothing is to be released, or the cluster is gone', async () => {
    const { ports: p } = ports({
      listReclaims: async () => [reclaim('10.0.0.5')],
    });
    await expect(releaseReclaimAddresses(p, NS, 'plant-a')).resolves.toEqual(
      [],
    );
    expect(p.writeCluster).not.toHaveBeenCalled();
    const { ports: q } = ports({ getCluster: async () => undefined });
    await expect(releaseReclaimAddresses(q, NS, 'plant-a')).resolves.toEqual(
      [],
    );
  });

  it('writes a conditional merge patch of the list and the annotation', () => {
    const c = cluster(['10.0.0.1', '10.0.0.5'], ['10.0.0.5']);
    expect(
      addressReleasePatch(c, {
        released: ['10.0.0.5'],
        addresses: ['10.0.0.1'],
        annotation: undefined,
      }),
    ).toEqual({
      metadata: {
        resourceVersion: '7',
        annotations: { [RECLAIM_ADDED_ADDRESSES_ANNOTATION]: null },
      },
      spec: { discovery: { addresses: ['10.0.0.1'] } },
    });
  });
});
