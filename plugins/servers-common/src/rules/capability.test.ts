import {
  advertise,
  invoke,
  invokeFirmware,
  invokeUpgrade,
  offerFor,
  type PowerAdvertisement,
  type PowerProviderType,
  POWER_VERBS,
  type PowerVerb,
} from './capability';
import type { NodeFacts } from './quorum';

const node: NodeFacts = {
  name: 'cp-1',
  controlPlane: true,
  ready: true,
  virtual: false,
};
const virtualNode: NodeFacts = { ...node, name: 'v-1', virtual: true };

describe('advertise', () => {
  it.each<
    [PowerProviderType, Omit<PowerAdvertisement, 'type' | 'attendedRack'>]
  >([
    [
      'none',
      {
        reboot: false,
        shutdown: false,
        powerOn: false,
        confirmsPowerOff: false,
      },
    ],
    [
      'talos',
      { reboot: true, shutdown: true, powerOn: false, confirmsPowerOff: false },
    ],
    [
      'redfish',
      { reboot: true, shutdown: true, powerOn: true, confirmsPowerOff: true },
    ],
  ])('%s advertises what the channel can do', (type, verbs) => {
    for (const attendedRack of [false, true]) {
      expect(advertise(type, { attendedRack })).toEqual({
        type,
        ...verbs,
        attendedRack,
      });
    }
  });
});

describe('offerFor', () => {
  it.each<[PowerProviderType, boolean, PowerVerb[]]>([
    ['none', false, []],
    ['none', true, []],
    ['talos', false, ['reboot']],
    ['talos', true, ['reboot', 'shutdown']],
    ['redfish', false, ['reboot', 'shutdown', 'power-on']],
    ['redfish', true, ['reboot', 'shutdown', 'power-on']],
  ])('%s with attendedRack %s offers %j', (type, attendedRack, offered) => {
    const advertisement = advertise(type, { attendedRack });
    expect(offerFor(advertisement)).toEqual(offered);
    expect(offerFor(advertisement, node)).toEqual(offered);
  });

  it('offers nothing for a virtual node, whatever the channel', () => {
    expect(
      offerFor(advertise('redfish', { attendedRack: true }), virtualNode),
    ).toEqual([]);
  });

  it('offers only what is advertised', () => {
    const rebootOnly: PowerAdvertisement = {
      type: 'redfish',
      reboot: true,
      shutdown: false,
      powerOn: false,
      confirmsPowerOff: true,
      attendedRack: true,
    };
    expect(offerFor(rebootOnly)).toEqual(['reboot']);
    expect(
      offerFor({ ...rebootOnly, reboot: false, shutdown: true, powerOn: true }),
    ).toEqual(['shutdown', 'power-on']);
  });

  it('offers nothing for type none even if its flags claim otherwise', () => {
    expect(
      offerFor({
        ...advertise('redfish', { attendedRack: true }),
        type: 'none',
      }),
    ).toEqual([]);
  });
});

describe('invoke', () => {
  const advertisements: PowerAdvertisement[] = [
    advertise('none', { attendedRack: false }),
    advertise('none', { attendedRack: true }),
    advertise('talos', { attendedRack: false }),
    advertise('talos', { attendedRack: true }),
    advertise('redfish', { attendedRack: false }),
    { ...advertise('redfish', { attendedRack: false }), powerOn: false },
  ];

  it('refuses exactly what offerFor does not offer', () => {
    for (const advertisement of advertisements) {
      for (const target of [undefined, node, virtualNode]) {
        const offered = offerFor(advertisement, target);
        for (const verb of POWER_VERBS) {
          expect({
            advertisement,
            target,
            verb,
            ok: invoke(advertisement, verb, target).ok,
          }).toEqual({
            advertisement,
            target,
            verb,
            ok: offered.includes(verb),
          });
        }
      }
    }
  });

  it('allows what is offered', () => {
    expect(
      invoke(advertise('talos', { attendedRack: true }), 'shutdown'),
    ).toEqual({ ok: true });
  });

  it.each<[PowerAdvertisement, PowerVerb, NodeFacts | undefined, string]>([
    [
      advertise('none', { attendedRack: true }),
      'reboot',
      undefined,
      'No power channel is configured (PowerProvider type none).',
    ],
    [
      advertise('talos', { attendedRack: false }),
      'shutdown',
      node,
      'Shutdown is offered only where it is recoverable: the talos channel cannot power the machine back on and the rack is not declared attended (attendedRack).',
    ],
    [
      advertise('talos', { attendedRack: true }),
      'power-on',
      node,
      'The talos channel does not advertise power-on.',
    ],
    [
      advertise('redfish', { attendedRack: false }),
      'reboot',
      virtualNode,
      'v-1 is a virtual node (rackside.dev/virtual-node=true); it has no power to act on.',
    ],
  ])('explains a refusal (%#)', (advertisement, verb, target, reason) => {
    expect(invoke(advertisement, verb, target)).toEqual({ ok: false, reason });
  });
});

describe('reach: a BMC channel acts only on nodes whose BMC is known', () => {
  const redfish = advertise('redfish', { attendedRack: false });
  const talos = advertise('talos', { attendedRack: true });
  const worker3 = { ...node, name: 'worker-3' };

  it('offers nothing over redfish to a node without a ServerBMC, and says why', () => {
    expect(offerFor(redfish, worker3, { hasServerBmc: false })).toEqual([]);
    expect(invoke(redfish, 'reboot', worker3, { hasServerBmc: false })).toEqual(
      {
        ok: false,
        reason:
          'worker-3 has no ServerBMC: the redfish channel does not know its BMC.',
      },
    );
    expect(offerFor(redfish, worker3, { hasServerBmc: true })).toEqual([
      'reboot',
      'shutdown',
      'power-on',
    ]);
  });

  it('does not ask Talos for a BMC', () => {
    expect(offerFor(talos, worker3, { hasServerBmc: false })).toEqual([
      'reboot',
      'shutdown',
    ]);
  });
});

describe('invokeFirmware', () => {
  const redfish = advertise('redfish', { attendedRack: false });
  const talos = advertise('talos', { attendedRack: false });
  const none = advertise('none', { attendedRack: false });
  const worker = {
    name: 'worker-1',
    controlPlane: false,
    ready: true,
    virtual: false,
  } as NodeFacts;

  it('refuses a channel that is not redfish, naming it', () => {
    expect(invokeFirmware(talos, worker)).toEqual({
      ok: false,
      reason:
        "A firmware update goes through a BMC's Redfish UpdateService, and the power channel is talos.",
    });
    expect(invokeFirmware(none, worker).ok).toBe(false);
  });

  it('refuses a BMC without an UpdateService', () => {
    expect(
      invokeFirmware(redfish, worker, {
        hasServerBmc: true,
        updateService: false,
      }),
    ).toEqual({
      ok: false,
      reason:
        "worker-1's BMC offers no Redfish UpdateService (no SimpleUpdate and no multipart push).",
    });
  });

  it('refuses a node whose BMC the channel does not know', () => {
    expect(invokeFirmware(redfish, worker, { hasServerBmc: false }).ok).toBe(
      false,
    );
  });

  it('allows a redfish BMC with an UpdateService, or not read yet', () => {
    expect(
      invokeFirmware(redfish, worker, {
        hasServerBmc: true,
        updateService: true,
      }),
    ).toEqual({ ok: true });
    expect(invokeFirmware(redfish, worker)).toEqual({ ok: true });
  });
});

describe('invokeUpgrade', () => {
  const talos = advertise('talos', { attendedRack: false });
  const redfish = advertise('redfish', { attendedRack: false });
  const none = advertise('none', { attendedRack: false });

  it('allows the talos channel on a real node', () => {
    expect(invokeUpgrade(talos, node)).toEqual({ ok: true });
  });

  it('refuses any other channel, naming it', () => {
    expect(invokeUpgrade(redfish, node)).toEqual({
      ok: false,
      reason:
        "A Talos upgrade goes over the talos power channel, and this deployment's is redfish.",
    });
    expect(invokeUpgrade(none, node)).toEqual({
      ok: false,
      reason: 'No power channel is configured (PowerProvider type none).',
    });
  });

  it('refuses a virtual node: it has no Talos of its own to upgrade', () => {
    const refused = invokeUpgrade(talos, virtualNode);
    expect(refused.ok).toBe(false);
    expect(refused.ok ? '' : refused.reason).toContain('virtual node');
  });
});
