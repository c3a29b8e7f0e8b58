import {
  busyNodeRefusal,
  virtualNodeRefusal,
  whyNotApplicable,
  type NodeState,
} from './applicability';
import { SERVER_ACTIONS } from '../permissions';

const inService: NodeState = {
  name: 'w-1',
  virtual: false,
  unschedulable: false,
};
const cordonedOutside: NodeState = { ...inService, unschedulable: true };
const drained: NodeState = {
  ...inService,
  unschedulable: true,
  open: { name: 'm1', intent: 'drain', phase: 'Drained' },
};
const off: NodeState = {
  ...inService,
  unschedulable: true,
  open: { name: 'm2', intent: 'shutdown', phase: 'PoweredOff' },
};

function applicable(node: NodeState): string[] {
  return SERVER_ACTIONS.filter(action => !whyNotApplicable(action, node));
}

describe('whether an action applies to a node now', () => {
  it('nothing applies to a virtual node, with the one sentence', () => {
    const virtual = { ...inService, name: 'v-1', virtual: true };
    for (const action of SERVER_ACTIONS) {
      expect(whyNotApplicable(action, virtual)).toBe(virtualNodeRefusal('v-1'));
    }
    expect(virtualNodeRefusal('v-1')).toContain(
      'rackside.dev/virtual-node=true',
    );
  });

  it('a node in service may start any maintenance, and has nothing to return or abandon', () => {
    expect(applicable(inService)).toEqual([
      'cordon',
      'drain',
      'reboot',
      'shutdown',
      'upgrade',
      'firmware',
    ]);
    expect(whyNotApplicable('uncordon', inService)).toMatch(/in service/);
  });

  it('a node cordoned outside Rackside may be drained or returned, not cordoned again', () => {
    expect(applicable(cordonedOutside)).toEqual([
      'uncordon',
      'drain',
      'reboot',
      'shutdown',
      'upgrade',
      'firmware',
    ]);
    expect(whyNotApplicable('cordon', cordonedOutside)).toMatch(
      /already cordoned/,
    );
  });

  it('a busy node starts nothing new and names its maintenance', () => {
    expect(applicable(drained)).toEqual(['uncordon', 'maintenance-abandon']);
    expect(whyNotApplicable('drain', drained)).toBe(
      busyNodeRefusal('w-1', drained.open!),
    );
    expect(busyNodeRefusal('w-1', drained.open!)).toBe(
      'w-1 is already under maintenance m1 (drain, Drained); at most one maintenance per node.',
    );
  });

  it('a rebooting node is offered abandon only: the reboot returns it by itself', () => {
    const rebooting: NodeState = {
      ...inService,
      unschedulable: true,
      open: { name: 'm3', intent: 'reboot', phase: 'Rebooting' },
    };
    expect(applicable(rebooting)).toEqual(['maintenance-abandon']);
    expect(whyNotApplicable('uncordon', rebooting)).toMatch(
      /by itself once it is back from the reboot/,
    );
  });

  it('a powered-off node is offered power-on and return, never abandon; an ending one nothing', () => {
    expect(applicable(off)).toEqual(['uncordon', 'power-on']);
    const ending = { ...drained, open: { ...drained.open!, abandon: {} } };
    expect(applicable(ending)).toEqual([]);
    expect(whyNotApplicable('uncordon', ending)).toMatch(/already ending/);
  });
});
