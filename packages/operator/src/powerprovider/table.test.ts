import type { PowerProvider } from '@rackside/plugin-servers-common';
import { channelStatus, channelTable, keyOf, stateOf } from './table';

const AT = '2026-12-07T08:00:00.000Z';

function provider(spec: Partial<PowerProvider['spec']>, generation = 4) {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'PowerProvider',
    metadata: { name: 'default', uid: 'u-1', generation },
    spec: { type: 'redfish', attendedRack: false, ...spec },
  } as PowerProvider;
}

describe('the PowerProvider table', () => {
  it('is Built only for the spec the open channel was built from', () => {
    const p = provider({});
    expect(keyOf(p)).toBe('u-1/4');
    expect(stateOf(p, { key: undefined, open: false })).toBe('Unbuilt');
    expect(stateOf(p, { key: 'u-1/4', open: true })).toBe('Built');
    // A spec change (a new generation) rebuilds.
    expect(stateOf(provider({}, 5), { key: 'u-1/4', open: true })).toBe(
      'Unbuilt',
    );
    // The last build gave no channel (it failed, or none is configured): tried again.
    expect(stateOf(p, { key: 'u-1/4', open: false })).toBe('Unbuilt');
  });

  it('closes the channel of a deleted PowerProvider, and then does nothing', () => {
    expect(stateOf(undefined, { key: 'u-1/4', open: true })).toBe('Gone');
    expect(stateOf(undefined, { key: undefined, open: false })).toBe('Built');
    expect(channelTable.Gone).toEqual({ kind: 'close' });
    expect(channelTable.Unbuilt).toEqual({ kind: 'build' });
    expect(channelTable.Built).toEqual({ kind: 'done' });
  });

  it('records a usable redfish channel with what it may offer and Ready True', () => {
    const status = channelStatus(provider({}), { ok: true }, AT);
    expect(status).toEqual(
      expect.objectContaining({
        reboot: true,
        shutdown: true,
        powerOn: true,
        observedGeneration: 4,
      }),
    );
    expect(status.conditions).toEqual([
      {
        type: 'Ready',
        status: 'True',
        reason: 'ChannelReady',
        message: 'The redfish channel is configured.',
        observedGeneration: 4,
        lastTransitionTime: AT,
      },
    ]);
  });

  it('offers no shutdown over talos without an attended rack (nothing could power it on)', () => {
    const status = channelStatus(provider({ type: 'talos' }), { ok: true }, AT);
    expect(status.reboot).toBe(true);
    expect(status.shutdown).toBe(false);
    expect(status.powerOn).toBe(false);
  });

  it('records an unusable channel as Ready False offering nothing', () => {
    const status = channelStatus(
      provider({}),
      { ok: false, message: 'secret bmc-credentials not found' },
      AT,
    );
    expect(status.reboot).toBe(false);
    expect(status.shutdown).toBe(false);
    expect(status.powerOn).toBe(false);
    expect(status.conditions?.[0]).toEqual(
      expect.objectContaining({
        status: 'False',
        reason: 'ChannelUnavailable',
        message:
          'The redfish channel cannot be used: secret bmc-credentials not found',
      }),
    );
  });

  it('says so when no channel is configured', () => {
    const status = channelStatus(provider({ type: 'none' }), { ok: true }, AT);
    expect(status.conditions?.[0]).toEqual(
      expect.objectContaining({ status: 'True', reason: 'NoChannel' }),
    );
    expect(status.reboot).toBe(false);
  });
});
