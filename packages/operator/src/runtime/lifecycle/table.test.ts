import type { Condition } from '@rackside/plugin-servers-common';
import { setCondition } from './conditions';
import { isoOf, MAX_PASSES, NEW, phaseOf, requeueOf, runPasses } from './table';

describe('the table runner', () => {
  it('goes on while a pass hands back an object, and answers the last wait', async () => {
    const seen: number[] = [];
    const result = await runPasses(1, async n => {
      seen.push(n);
      return n < 3
        ? { next: n + 1 }
        : { requeueAfterMs: requeueOf({ kind: 'wait', requeueAfterMs: 500 }) };
    });
    expect(seen).toEqual([1, 2, 3]);
    expect(result).toEqual({ requeueAfterMs: 500 });
  });

  it('stops a row that never settles after the one limit', async () => {
    let passes = 0;
    const result = await runPasses('x', async x => {
      passes++;
      return { next: x };
    });
    expect(passes).toBe(MAX_PASSES);
    expect(result.requeueAfterMs).toBeUndefined();
    expect(await runPasses(undefined, async () => ({}))).toEqual({
      requeueAfterMs: undefined,
    });
  });

  it('reads New for an object without a phase, and time from the clock it is given', () => {
    expect(phaseOf({})).toBe(NEW);
    expect(phaseOf({ status: { phase: 'Joined' } })).toBe('Joined');
    expect(requeueOf({ kind: 'transition' })).toBeUndefined();
    expect(isoOf({ now: () => Date.UTC(2026, 0, 2, 3, 4, 5) })).toBe(
      '2026-01-02T03:04:05.000Z',
    );
  });
});

describe('setCondition', () => {
  const base = {
    type: 'Waiting',
    status: 'True' as const,
    reason: 'Unreachable',
    message: 'no answer',
  };

  it('keeps lastTransitionTime while the status stays, whatever the reason says', () => {
    const first = setCondition<Condition>([], base, '2026-01-01T00:00:00Z');
    const again = setCondition(
      first,
      { ...base, reason: 'NotInNetworks', message: 'outside' },
      '2026-01-01T00:05:00Z',
    );
    expect(again).toEqual([
      {
        ...base,
        reason: 'NotInNetworks',
        message: 'outside',
        lastTransitionTime: '2026-01-01T00:00:00Z',
      },
    ]);
    const changed = setCondition(
      again,
      { ...base, status: 'False' },
      '2026-01-01T00:09:00Z',
    );
    expect(changed[0].lastTransitionTime).toBe('2026-01-01T00:09:00Z');
  });

  it('leaves the other conditions as they are', () => {
    const other: Condition = {
      ...base,
      type: 'Ready',
      lastTransitionTime: 't0',
    };
    const next = setCondition<Condition>([other], base, 't1');
    expect(next).toEqual([other, { ...base, lastTransitionTime: 't1' }]);
  });
});
