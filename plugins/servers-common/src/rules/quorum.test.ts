import {
  nodeRolesOf,
  deriveQuorum,
  isNodeReady,
  isTerminalPhase,
  MAINTENANCE_PHASES,
  type MaintenanceFacts,
  type MaintenanceIntent,
  type MaintenancePhase,
  NO_CONTROL_PLANE_REASON,
  type NodeFacts,
  nodeFactsFromNode,
  quorumSize,
  takesNodeDown,
} from './quorum';

function cp(name: string, ready = true): NodeFacts {
  return { name, controlPlane: true, ready, virtual: false };
}

function worker(name: string, ready = true): NodeFacts {
  return { name, controlPlane: false, ready, virtual: false };
}

function maintenance(
  nodeName: string,
  intent: MaintenanceIntent,
  phase: MaintenancePhase,
): MaintenanceFacts {
  return { nodeName, intent, phase };
}

describe('quorumSize', () => {
  it.each([
    [1, 1],
    [2, 2],
    [3, 2],
    [4, 3],
    [5, 3],
    [6, 4],
    [7, 4],
  ])('%i members need %i', (members, quorum) => {
    expect(quorumSize(members)).toBe(quorum);
  });
});

describe('isTerminalPhase', () => {
  it('treats exactly Complete, Refused and Failed as terminal', () => {
    expect(MAINTENANCE_PHASES.filter(isTerminalPhase)).toEqual([
      'Complete',
      'Refused',
      'Failed',
    ]);
  });
});

describe('takesNodeDown', () => {
  it.each<[MaintenanceIntent, MaintenancePhase, boolean]>([
    ['reboot', 'Requested', true],
    ['reboot', 'Draining', true],
    ['reboot', 'Rebooting', true],
    ['reboot', 'Returning', true],
    ['shutdown', 'Drained', true],
    ['shutdown', 'PoweredOff', true],
    ['reboot', 'Complete', false],
    ['shutdown', 'Refused', false],
    ['shutdown', 'Failed', false],
    ['cordon', 'Cordoned', false],
    ['drain', 'Drained', false],
  ])('%s in %s: %s', (intent, phase, expected) => {
    expect(takesNodeDown(maintenance('n', intent, phase))).toBe(expected);
  });
});

describe('deriveQuorum', () => {
  it.each([
    [1, 1, 0],
    [2, 2, 0],
    [3, 2, 1],
    [4, 3, 1],
    [5, 3, 2],
  ])(
    'with %i ready members derives quorum %i and margin %i',
    (members, quorum, margin) => {
      const nodes = [
        ...Array.from({ length: members }, (_, i) => cp(`cp-${i + 1}`)),
        worker('w-1'),
        worker('w-2'),
      ];
      expect(deriveQuorum(nodes, [])).toEqual({
        derived: true,
        members,
        quorum,
        ready: members,
        margin,
        goingDown: [],
      });
    },
  );

  it('derives nothing when no node carries the control-plane label', () => {
    expect(deriveQuorum([worker('w-1'), worker('w-2')], [])).toEqual({
      derived: false,
      reason: NO_CONTROL_PLANE_REASON,
    });
    expect(deriveQuorum([], [])).toEqual({
      derived: false,
      reason: 'no node carries the node-role.kubernetes.io/control-plane label',
    });
  });

  it('does not count NotReady members as ready', () => {
    expect(
      deriveQuorum([cp('cp-1'), cp('cp-2', false), cp('cp-3')], []),
    ).toMatchObject({ members: 3, quorum: 2, ready: 2, margin: 0 });
  });

  it('lets the margin go negative below quorum', () => {
    expect(
      deriveQuorum([cp('cp-1'), cp('cp-2', false), cp('cp-3', false)], []),
    ).toMatchObject({ ready: 1, margin: -1 });
  });

  it('counts a member in a non-terminal reboot or shutdown as going down', () => {
    const nodes = [cp('cp-1'), cp('cp-2'), cp('cp-3'), cp('cp-4'), cp('cp-5')];
    expect(
      deriveQuorum(nodes, [
        maintenance('cp-4', 'shutdown', 'PoweredOff'),
        maintenance('cp-2', 'reboot', 'Requested'),
      ]),
    ).toEqual({
      derived: true,
      members: 5,
      quorum: 3,
      ready: 3,
      margin: 0,
      goingDown: ['cp-2', 'cp-4'],
    });
  });

  it('does not count terminal maintenances or cordon and drain ones', () => {
    const nodes = [cp('cp-1'), cp('cp-2'), cp('cp-3')];
    expect(
      deriveQuorum(nodes, [
        maintenance('cp-1', 'reboot', 'Complete'),
        maintenance('cp-1', 'shutdown', 'Failed'),
        maintenance('cp-2', 'reboot', 'Refused'),
        maintenance('cp-2', 'drain', 'Drained'),
        maintenance('cp-3', 'cordon', 'Cordoned'),
      ]),
    ).toMatchObject({ ready: 3, margin: 1, goingDown: [] });
  });

  it('does not subtract a NotReady member twice when it is also going down', () => {
    const nodes = [cp('cp-1'), cp('cp-2', false), cp('cp-3')];
    expect(
      deriveQuorum(nodes, [maintenance('cp-2', 'reboot', 'Rebooting')]),
    ).toMatchObject({ ready: 2, margin: 0, goingDown: ['cp-2'] });
  });

  it('lists only members as going down, not workers', () => {
    expect(
      deriveQuorum(
        [cp('cp-1'), worker('w-1')],
        [maintenance('w-1', 'reboot', 'Rebooting')],
      ),
    ).toMatchObject({ ready: 1, margin: 0, goingDown: [] });
  });
});

describe('isNodeReady', () => {
  it('is ready only with a Ready condition that is True', () => {
    const withReady = (status: string) => ({
      status: { conditions: [{ type: 'Ready', status }] },
    });
    expect(isNodeReady(withReady('True'))).toBe(true);
    expect(isNodeReady(withReady('False'))).toBe(false);
    expect(isNodeReady(withReady('Unknown'))).toBe(false);
  });

  it('is not ready without a Ready condition, without status, or without a node', () => {
    expect(
      isNodeReady({
        status: { conditions: [{ type: 'MemoryPressure', status: 'True' }] },
      }),
    ).toBe(false);
    expect(isNodeReady({})).toBe(false);
    expect(isNodeReady(undefined)).toBe(false);
  });
});

describe('nodeFactsFromNode', () => {
  const readyCondition = (status: string) => ({ type: 'Ready', status });

  it('reads a control-plane node whose label has an empty value', () => {
    expect(
      nodeFactsFromNode({
        metadata: {
          name: 'cp-1',
          labels: { 'node-role.kubernetes.io/control-plane': '' },
        },
        status: {
          conditions: [
            { type: 'MemoryPressure', status: 'False' },
            readyCondition('True'),
          ],
        },
      }),
    ).toEqual({
      name: 'cp-1',
      controlPlane: true,
      ready: true,
      virtual: false,
    });
  });

  it('reads a virtual worker', () => {
    expect(
      nodeFactsFromNode({
        metadata: {
          name: 'v-1',
          labels: { 'rackside.dev/virtual-node': 'true' },
        },
        status: { conditions: [readyCondition('True')] },
      }),
    ).toEqual({ name: 'v-1', controlPlane: false, ready: true, virtual: true });
  });

  it('reads the virtual label only when it says true', () => {
    expect(
      nodeFactsFromNode({
        metadata: {
          name: 'w-1',
          labels: { 'rackside.dev/virtual-node': 'false' },
        },
      }).virtual,
    ).toBe(false);
  });

  it.each([
    ['False', false],
    ['Unknown', false],
    ['True', true],
  ])('reads Ready=%s as ready %s', (status, ready) => {
    expect(
      nodeFactsFromNode({
        metadata: { name: 'n' },
        status: { conditions: [readyCondition(status)] },
      }).ready,
    ).toBe(ready);
  });

  it('treats a node without a Ready condition or labels as a NotReady worker', () => {
    expect(
      nodeFactsFromNode({
        metadata: { name: 'w-2' },
        status: { conditions: [{ type: 'DiskPressure', status: 'True' }] },
      }),
    ).toEqual({
      name: 'w-2',
      controlPlane: false,
      ready: false,
      virtual: false,
    });
    expect(nodeFactsFromNode({})).toEqual({
      name: '',
      controlPlane: false,
      ready: false,
      virtual: false,
    });
  });
});

describe('nodeRolesOf', () => {
  it('reads the roles from node-role labels, sorted, ignoring every other label and an empty role', () => {
    expect(
      nodeRolesOf({
        'node-role.kubernetes.io/worker': '',
        'node-role.kubernetes.io/control-plane': 'true',
        'node-role.kubernetes.io/': '',
        'kubernetes.io/hostname': 'cp-1',
        'example.com/node-role.kubernetes.io/gpu': '',
      }),
    ).toEqual(['control-plane', 'worker']);
    expect(nodeRolesOf()).toEqual([]);
  });
});
