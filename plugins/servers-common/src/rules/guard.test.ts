import { guard, type GuardResult, takesMemberDown } from './guard';
import { SERVER_ACTIONS, type ServerAction } from '../permissions';
import { deriveQuorum, type MaintenanceFacts, type NodeFacts } from './quorum';

function cp(name: string, ready = true): NodeFacts {
  return { name, controlPlane: true, ready, virtual: false };
}

function worker(name: string, ready = true): NodeFacts {
  return { name, controlPlane: false, ready, virtual: false };
}

function members(count: number, notReady: string[] = []): NodeFacts[] {
  return Array.from({ length: count }, (_, i) => {
    const name = `cp-${i + 1}`;
    return cp(name, !notReady.includes(name));
  });
}

/** Derives from the nodes and maintenances, then guards the request. */
function check(
  action: ServerAction,
  nodeName: string,
  nodes: NodeFacts[],
  maintenances: MaintenanceFacts[] = [],
): GuardResult {
  return guard({ action, nodeName }, deriveQuorum(nodes, maintenances), nodes);
}

/** The actions that end with the machine down or rebooted (an upgrade, a firmware update). */
const MEMBER_DOWN_ACTIONS = ['reboot', 'shutdown', 'upgrade', 'firmware'];
const NON_POWER_ACTIONS = SERVER_ACTIONS.filter(
  action => !MEMBER_DOWN_ACTIONS.includes(action),
);

describe('takesMemberDown', () => {
  it('is true for reboot and shutdown, and an upgrade or firmware update (each ends with a reboot), only', () => {
    expect(SERVER_ACTIONS.filter(takesMemberDown)).toEqual(MEMBER_DOWN_ACTIONS);
  });
});

describe('guard: reboot and shutdown of a ready member', () => {
  it.each<[number, GuardResult['verdict'], number, number, number]>([
    // members, verdict, quorum, margin, marginAfter
    [1, 'refuse', 1, 0, -1],
    [2, 'refuse', 2, 0, -1],
    [3, 'hazard', 2, 1, 0],
    [4, 'hazard', 3, 1, 0],
    [5, 'allow', 3, 2, 1],
  ])('with %i members: %s', (count, verdict, quorum, margin, marginAfter) => {
    // An upgrade and a firmware update are judged as the reboot they end with.
    for (const action of MEMBER_DOWN_ACTIONS as ServerAction[]) {
      expect(
        check(action, 'cp-1', [...members(count), worker('w-1')]),
      ).toMatchObject({
        verdict,
        members: count,
        quorum,
        margin,
        marginAfter,
      });
    }
  });

  it('explains a refusal with members, quorum and margin', () => {
    expect(check('reboot', 'cp-1', members(2)).reason).toBe(
      'Rebooting cp-1 would leave 1 of 2 control-plane members ready; quorum needs 2 (margin 0).',
    );
  });

  it('explains a hazard as consuming the last of the margin', () => {
    expect(check('shutdown', 'cp-2', members(3)).reason).toBe(
      'Shutting down cp-2 would leave 2 of 3 control-plane members ready, exactly the quorum of 2: it consumes the last of the margin.',
    );
  });

  it('explains an allowed member reboot with the margin it spends', () => {
    expect(check('reboot', 'cp-5', members(5)).reason).toBe(
      'Rebooting cp-5 leaves 4 of 5 control-plane members ready; quorum needs 3 (margin 2 to 1).',
    );
  });
});

describe('guard: a member already NotReady', () => {
  const nodes = members(3, ['cp-3']);

  it('refuses a reboot of another member at margin 0', () => {
    expect(check('reboot', 'cp-1', nodes)).toEqual({
      verdict: 'refuse',
      members: 3,
      quorum: 2,
      margin: 0,
      marginAfter: -1,
      reason:
        'Rebooting cp-1 would leave 1 of 3 control-plane members ready; quorum needs 2 (margin 0).',
    });
  });

  it('allows a reboot of the NotReady member itself: it spends no margin', () => {
    expect(check('reboot', 'cp-3', nodes)).toEqual({
      verdict: 'allow',
      members: 3,
      quorum: 2,
      margin: 0,
      marginAfter: 0,
      reason:
        'Rebooting cp-3 takes no ready member down: it is already NotReady (2 of 3 control-plane members ready, quorum needs 2).',
    });
  });

  it('allows the NotReady member to be stopped even below quorum, and refuses the last ready one', () => {
    const below = members(3, ['cp-2', 'cp-3']);
    expect(check('shutdown', 'cp-2', below)).toMatchObject({
      verdict: 'allow',
      margin: -1,
      marginAfter: -1,
    });
    expect(check('reboot', 'cp-1', below)).toMatchObject({
      verdict: 'refuse',
      margin: -1,
      marginAfter: -2,
    });
  });
});

describe('guard: maintenances already running', () => {
  const nodes = members(3);

  it.each<MaintenanceFacts>([
    { nodeName: 'cp-3', intent: 'reboot', phase: 'Rebooting' },
    { nodeName: 'cp-3', intent: 'reboot', phase: 'Requested' },
    { nodeName: 'cp-3', intent: 'shutdown', phase: 'PoweredOff' },
    { nodeName: 'cp-3', intent: 'shutdown', phase: 'Draining' },
  ])(
    'counts a $intent in $phase as down: another member is refused',
    running => {
      expect(check('reboot', 'cp-1', nodes, [running])).toMatchObject({
        verdict: 'refuse',
        margin: 0,
        marginAfter: -1,
      });
    },
  );

  it.each<MaintenanceFacts>([
    { nodeName: 'cp-3', intent: 'reboot', phase: 'Complete' },
    { nodeName: 'cp-3', intent: 'shutdown', phase: 'Failed' },
    { nodeName: 'cp-3', intent: 'reboot', phase: 'Refused' },
    { nodeName: 'cp-3', intent: 'cordon', phase: 'Cordoned' },
    { nodeName: 'cp-3', intent: 'drain', phase: 'Drained' },
  ])(
    'does not count a $intent in $phase: another member is only a hazard',
    running => {
      expect(check('reboot', 'cp-1', nodes, [running])).toMatchObject({
        verdict: 'hazard',
        margin: 1,
        marginAfter: 0,
      });
    },
  );

  it('does not spend margin again for a member already going down', () => {
    expect(
      check('shutdown', 'cp-3', nodes, [
        { nodeName: 'cp-3', intent: 'reboot', phase: 'Rebooting' },
      ]),
    ).toMatchObject({
      verdict: 'allow',
      margin: 0,
      marginAfter: 0,
      reason: expect.stringContaining('it is already going down'),
    });
  });
});

describe('guard: actions that take no member down', () => {
  it.each(NON_POWER_ACTIONS)(
    '%s of a member is allowed at margin 0 and below quorum',
    action => {
      for (const nodes of [
        members(3, ['cp-3']),
        members(3, ['cp-2', 'cp-3']),
      ]) {
        const result = check(action, 'cp-1', nodes);
        expect(result.verdict).toBe('allow');
        expect(result.marginAfter).toBe(result.margin);
      }
    },
  );

  it('says so with the numbers', () => {
    expect(check('drain', 'cp-1', members(3, ['cp-3'])).reason).toBe(
      'Draining cp-1 takes no control-plane member down (2 of 3 control-plane members ready, quorum needs 2).',
    );
  });
});

describe('guard: workers', () => {
  it.each(['reboot', 'shutdown'] as const)(
    '%s of a worker is allowed whatever the margin',
    action => {
      for (const nodes of [
        [...members(3), worker('w-1')],
        [...members(3, ['cp-2', 'cp-3']), worker('w-1')],
        [...members(1), worker('w-1')],
      ]) {
        const result = check(action, 'w-1', nodes);
        expect(result.verdict).toBe('allow');
        expect(result.marginAfter).toBe(result.margin);
      }
    },
  );

  it('says the quorum is untouched', () => {
    expect(check('reboot', 'w-1', [...members(1), worker('w-1')]).reason).toBe(
      'Rebooting w-1 leaves the quorum untouched: it is not a control-plane member (1 of 1 control-plane members ready, quorum needs 1).',
    );
  });
});

describe('guard: absent derivation', () => {
  const nodes = [worker('w-1'), worker('w-2', false)];

  it.each(['reboot', 'shutdown'] as const)(
    'refuses %s of every node',
    action => {
      for (const node of nodes) {
        expect(check(action, node.name, nodes)).toEqual({
          verdict: 'refuse',
          members: null,
          quorum: null,
          margin: null,
          marginAfter: null,
          reason: expect.stringContaining(
            'the control-plane quorum cannot be derived because no node carries the node-role.kubernetes.io/control-plane label',
          ),
        });
      }
    },
  );

  it.each(NON_POWER_ACTIONS)('allows %s', action => {
    expect(check(action, 'w-1', nodes)).toEqual({
      verdict: 'allow',
      members: null,
      quorum: null,
      margin: null,
      marginAfter: null,
      reason: expect.stringContaining('takes no control-plane member down.'),
    });
  });
});

describe('guard: nodes it cannot act on', () => {
  const virtualWorker: NodeFacts = {
    name: 'v-1',
    controlPlane: false,
    ready: true,
    virtual: true,
  };
  const virtualMember: NodeFacts = {
    ...virtualWorker,
    name: 'v-cp',
    controlPlane: true,
  };

  it.each(SERVER_ACTIONS)('refuses %s of a virtual node', action => {
    for (const nodes of [
      [...members(5), virtualWorker, virtualMember],
      [worker('w-1'), virtualWorker],
    ]) {
      const result = check(action, 'v-1', nodes);
      expect(result.verdict).toBe('refuse');
      expect(result.reason).toContain(
        'v-1 is a virtual node (rackside.dev/virtual-node=true)',
      );
    }
    expect(check(action, 'v-cp', [...members(5), virtualMember]).verdict).toBe(
      'refuse',
    );
  });

  it.each(SERVER_ACTIONS)('refuses %s of a node it does not know', action => {
    const result = check(action, 'ghost', members(5));
    expect(result.verdict).toBe('refuse');
    expect(result.reason).toContain('there is no node named ghost');
  });
});
