import { planWindowVerdict } from './planWindow';

const at = (iso: string) => Date.parse(iso);

describe('planWindowVerdict', () => {
  it('is open without a window', () => {
    expect(planWindowVerdict(undefined, at('2026-08-04T10:00:00Z'))).toEqual({
      open: true,
    });
  });

  it('waits for notBefore and says when it opens', () => {
    const window = { timeZone: 'UTC', notBefore: '2026-08-04T10:00:05Z' };
    expect(planWindowVerdict(window, at('2026-08-04T10:00:00Z'))).toEqual({
      open: false,
      message: 'the window opens at 2026-08-04T10:00:05Z',
      opensAt: at('2026-08-04T10:00:05Z'),
    });
    expect(planWindowVerdict(window, at('2026-08-04T10:00:05Z'))).toEqual({
      open: true,
    });
  });

  it('never opens again after notAfter', () => {
    const window = { timeZone: 'UTC', notAfter: '2026-08-04T12:00:00Z' };
    expect(planWindowVerdict(window, at('2026-08-04T11:59:59Z')).open).toBe(
      true,
    );
    expect(planWindowVerdict(window, at('2026-08-04T12:00:00Z'))).toEqual({
      open: false,
      message:
        'the window closed at 2026-08-04T12:00:00Z: no step starts after it',
    });
  });

  it('reads weekdays and hours in the time zone, across midnight', () => {
    // 2026-08-04 is a Tuesday; Berlin is UTC+2 in August.
    const window = {
      timeZone: 'Europe/Berlin',
      weekdays: ['Tue' as const],
      hours: { start: '22:00', end: '04:00' },
    };
    // Tuesday 21:59 Berlin: closed, opens at 22:00 Berlin = 20:00 UTC.
    expect(planWindowVerdict(window, at('2026-08-04T19:59:00Z'))).toEqual({
      open: false,
      message:
        'outside the window (Tue 22:00-04:00 Europe/Berlin): it opens at 2026-08-04T20:00:00.000Z',
      opensAt: at('2026-08-04T20:00:00Z'),
    });
    // Tuesday 22:00 and Wednesday 03:59 Berlin belong to Tuesday's window.
    expect(planWindowVerdict(window, at('2026-08-04T20:00:00Z')).open).toBe(
      true,
    );
    expect(planWindowVerdict(window, at('2026-08-05T01:59:00Z')).open).toBe(
      true,
    );
    // Wednesday 04:00 Berlin: closed until next Tuesday 22:00.
    expect(planWindowVerdict(window, at('2026-08-05T02:00:00Z'))).toMatchObject(
      { open: false, opensAt: at('2026-08-11T20:00:00Z') },
    );
    // Wednesday 22:30 Berlin is not Tuesday's.
    expect(planWindowVerdict(window, at('2026-08-05T20:30:00Z')).open).toBe(
      false,
    );
  });

  it('opens at the first weekly opening after notBefore, and not past notAfter', () => {
    const window = {
      timeZone: 'UTC',
      notBefore: '2026-08-04T10:00:00Z',
      notAfter: '2026-08-04T23:00:00Z',
      hours: { start: '12:00', end: '13:00' },
    };
    expect(planWindowVerdict(window, at('2026-08-04T09:00:00Z'))).toMatchObject(
      { open: false, opensAt: at('2026-08-04T12:00:00Z') },
    );
    expect(planWindowVerdict(window, at('2026-08-04T14:00:00Z'))).toEqual({
      open: false,
      message: 'outside the window (12:00-13:00 UTC)',
      opensAt: undefined,
    });
  });
});
