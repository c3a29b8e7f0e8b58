import { RECLAIM_ADDED_ADDRESSES_ANNOTATION } from '@rackside/plugin-servers-common';
import {
  fakeReclaim,
  fakeTalosCluster,
  fakeTalosMachine,
} from '../testing/fakeMachines';
import {
  addressKey,
  applyAddressPlan,
  planReclaimAddresses,
  sameAddress,
  staleReclaimAddresses,
} from './discoveryAddresses';

describe('addresses', () => {
  it('compares host and port, with the Talos API port implied', () => {
    expect(sameAddress('10.0.0.5', '10.0.0.5:50000')).toBe(true);
    expect(sameAddress('10.0.0.5', '10.0.0.5:50001')).toBe(false);
    expect(sameAddress('Node-7.Example', 'node-7.example')).toBe(true);
    expect(sameAddress('[fd00::5]:50000', 'fd00::5')).toBe(true);
    expect(addressKey('fd00::5')).toBe('fd00::5|50000');
  });
});

describe('reclaim address clean-up', () => {
  const cluster = () =>
    fakeTalosCluster('plant-a', {
      addresses: ['10.0.0.1', '10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.9'],
      reclaimAdded: ['10.0.0.2', '10.0.0.3', '10.0.0.4', '10.0.0.5'],
    });

  it('keeps addresses of Done and running requests and of machines; drops the rest it recorded', () => {
    const stale = staleReclaimAddresses(
      cluster(),
      [
        fakeReclaim('done', '10.0.0.2', 'plant-a', { phase: 'Done' }),
        fakeReclaim('new', '10.0.0.3:50000', 'plant-a'),
        fakeReclaim('failed', '10.0.0.4', 'plant-a', { phase: 'Failed' }),
        // Another TalosCluster's request does not hold this cluster's address.
        fakeReclaim('other', '10.0.0.5', 'elsewhere', { phase: 'Resetting' }),
      ],
      [],
    );
    expect(stale).toEqual(['10.0.0.4', '10.0.0.5']);
    const withMachine = staleReclaimAddresses(
      cluster(),
      [],
      [
        fakeTalosMachine('aaaaaaaa-0000-0000-0000-000000000004', 'plant-a', {
          address: '10.0.0.4',
        }),
      ],
    );
    expect(withMachine).toEqual(['10.0.0.2', '10.0.0.3', '10.0.0.5']);
  });

  it('never takes out an address the user listed, and never records one', () => {
    const plan = planReclaimAddresses(cluster(), [], [], '10.0.0.9');
    expect(plan).toEqual({
      addresses: ['10.0.0.1', '10.0.0.9'],
      recorded: [],
      removed: ['10.0.0.2', '10.0.0.3', '10.0.0.4'],
      appended: false,
    });
    const applied = applyAddressPlan(cluster(), plan!);
    expect(applied.spec.discovery.addresses).toEqual(['10.0.0.1', '10.0.0.9']);
    expect(
      applied.metadata.annotations?.[RECLAIM_ADDED_ADDRESSES_ANNOTATION],
    ).toBeUndefined();
  });

  it('appends and records a new address; nothing to do is undefined', () => {
    const plan = planReclaimAddresses(
      fakeTalosCluster('plant-a', { addresses: ['10.0.0.1'] }),
      [],
      [],
      '10.0.0.7',
    );
    expect(plan).toMatchObject({
      addresses: ['10.0.0.1', '10.0.0.7'],
      recorded: ['10.0.0.7'],
      appended: true,
    });
    expect(
      planReclaimAddresses(
        fakeTalosCluster('plant-a', { addresses: ['10.0.0.1'] }),
        [],
        [],
        '10.0.0.1',
      ),
    ).toBeUndefined();
  });
});
