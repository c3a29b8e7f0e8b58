import {
  type Ceremony,
  ceremonyAt,
  ceremonyFor,
  checkCeremony,
  type CeremonySubmission,
} from './ceremony';
import type { GuardVerdict } from './guard';
import { SERVER_ACTIONS, type ServerAction } from '../permissions';

/** docs/architecture.md, "The rules and who calls them": action, level, preflightAck, typedName. */
const LADDER: [ServerAction, Ceremony['level'], boolean, boolean][] = [
  ['uncordon', 'reason', false, false],
  ['cordon', 'reason', false, false],
  ['maintenance-abandon', 'reason', false, false],
  ['power-on', 'reason', false, false],
  ['drain', 'preflight', true, false],
  ['reboot', 'typed-name', true, true],
  ['shutdown', 'typed-name', true, true],
  // Each ends with a reboot: the ceremony of one.
  ['upgrade', 'typed-name', true, true],
  ['firmware', 'typed-name', true, true],
];

describe('ceremonyFor', () => {
  it('has a rung for every action', () => {
    expect(LADDER.map(([action]) => action).sort()).toEqual(
      [...SERVER_ACTIONS].sort(),
    );
  });

  it.each(LADDER)(
    'allowed %s asks for the %s ceremony',
    (action, level, preflightAck, typedName) => {
      expect(ceremonyFor(action, 'allow')).toEqual({
        level,
        requires: { reason: true, preflightAck, typedName, typedReason: false },
      });
    },
  );

  it.each(
    LADDER.map(([action, , preflightAck]): [ServerAction, boolean] => [
      action,
      preflightAck,
    ]),
  )(
    'a hazard %s keeps its pre-flight acknowledgement (%s) and adds typed name and reason',
    (action, preflightAck) => {
      expect(ceremonyFor(action, 'hazard')).toEqual({
        level: 'hazard',
        requires: {
          reason: true,
          preflightAck,
          typedName: true,
          typedReason: true,
        },
        hint: {
          icon: 'warning',
          title: 'This consumes the last of the quorum margin',
        },
      });
    },
  );

  it.each(SERVER_ACTIONS)('a refused %s is never a ceremony', action => {
    expect(ceremonyFor(action, 'refuse')).toEqual({
      level: 'refused',
      requires: {
        reason: true,
        preflightAck: false,
        typedName: false,
        typedReason: false,
      },
    });
  });
});

describe('checkCeremony', () => {
  const complete: CeremonySubmission = {
    reason: 'replace the failed DIMM in slot B2',
    preflightToken: 'pf-123',
    typedName: 'cp-1',
    nodeName: 'cp-1',
  };

  it.each<[ServerAction, GuardVerdict]>([
    ['cordon', 'allow'],
    ['drain', 'allow'],
    ['reboot', 'allow'],
    ['shutdown', 'hazard'],
    ['cordon', 'hazard'],
  ])('accepts a complete submission for %s (%s)', (action, verdict) => {
    expect(checkCeremony(ceremonyFor(action, verdict), complete)).toEqual([]);
  });

  it('asks only for a reason at the reason level', () => {
    expect(
      checkCeremony(ceremonyFor('uncordon', 'allow'), {
        reason: 'DIMM replaced',
        nodeName: 'cp-1',
      }),
    ).toEqual([]);
  });

  it.each(['', '   \n'])('rejects a blank reason %j', reason => {
    expect(
      checkCeremony(ceremonyFor('cordon', 'allow'), { ...complete, reason }),
    ).toEqual(['A reason is required.']);
  });

  it.each([undefined, '', '  '])(
    'rejects a missing pre-flight token %j where one is required',
    preflightToken => {
      for (const action of ['drain', 'reboot', 'shutdown'] as const) {
        expect(
          checkCeremony(ceremonyFor(action, 'allow'), {
            ...complete,
            preflightToken,
          }),
        ).toEqual([
          'Acknowledge the pre-flight impact: the request carries no pre-flight token.',
        ]);
      }
    },
  );

  it('does not ask for a token where the action has no pre-flight', () => {
    expect(
      checkCeremony(ceremonyFor('power-on', 'hazard'), {
        ...complete,
        preflightToken: undefined,
      }),
    ).toEqual([]);
  });

  it('rejects a missing typed name for reboot and for any hazard', () => {
    for (const ceremony of [
      ceremonyFor('reboot', 'allow'),
      ceremonyFor('cordon', 'hazard'),
    ]) {
      expect(
        checkCeremony(ceremony, { ...complete, typedName: undefined }),
      ).toEqual(['Type the node name cp-1 to confirm.']);
    }
  });

  it('rejects a typed name that is not the node', () => {
    expect(
      checkCeremony(ceremonyFor('shutdown', 'allow'), {
        ...complete,
        typedName: 'cp-2',
      }),
    ).toEqual(['The typed name "cp-2" does not match the node cp-1.']);
    expect(
      checkCeremony(ceremonyFor('shutdown', 'allow'), {
        ...complete,
        typedName: 'CP-1',
      }),
    ).toHaveLength(1);
  });

  it('forgives whitespace around the typed name', () => {
    expect(
      checkCeremony(ceremonyFor('reboot', 'allow'), {
        ...complete,
        typedName: ' cp-1\n',
      }),
    ).toEqual([]);
  });

  it('lists every problem at once', () => {
    expect(
      checkCeremony(ceremonyFor('reboot', 'hazard'), {
        reason: ' ',
        nodeName: 'cp-1',
      }),
    ).toEqual([
      'A reason is required.',
      'Acknowledge the pre-flight impact: the request carries no pre-flight token.',
      'Type the node name cp-1 to confirm.',
    ]);
  });

  it('never lets a refused action through, however complete the submission', () => {
    expect(checkCeremony(ceremonyFor('reboot', 'refuse'), complete)).toEqual([
      'This action is refused; no ceremony can allow it.',
    ]);
  });
});

describe('ceremonyAt', () => {
  it('rebuilds from the level exactly what ceremonyFor gave, for every action and verdict', () => {
    for (const action of SERVER_ACTIONS) {
      for (const verdict of ['allow', 'hazard', 'refuse'] as const) {
        const ceremony = ceremonyFor(action, verdict);
        expect(ceremonyAt(action, ceremony.level)).toEqual(ceremony);
      }
    }
  });

  it('keeps the pre-flight of a drain at the hazard level', () => {
    expect(ceremonyAt('drain', 'hazard').requires).toEqual({
      reason: true,
      preflightAck: true,
      typedName: true,
      typedReason: true,
    });
  });
});
