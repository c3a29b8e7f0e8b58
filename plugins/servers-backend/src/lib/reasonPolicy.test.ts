import { ConfigReader } from '@backstage/config';
import { checkReason, readReasonPolicy } from './reasonPolicy';

describe('reason policy', () => {
  it('defaults to 10..500 characters', () => {
    const policy = readReasonPolicy(new ConfigReader({}));
    expect(policy).toEqual({
      minLength: 10,
      maxLength: 500,
      pattern: undefined,
      hint: undefined,
    });
    expect(checkReason(policy, '   short   ')).toMatch(/at least 10/);
    expect(checkReason(policy, 'x'.repeat(501))).toMatch(/at most 500/);
    expect(checkReason(policy, 'a sound reason')).toBeUndefined();
  });

  it('applies a configured pattern with its hint', () => {
    const policy = readReasonPolicy(
      new ConfigReader({
        servers: {
          reasonPolicy: {
            minLength: 3,
            pattern: 'OPS-\\d+',
            hint: 'cite OPS-n',
          },
        },
      }),
    );
    expect(checkReason(policy, 'no ticket')).toMatch(/cite OPS-n/);
    expect(checkReason(policy, 'see OPS-1')).toBeUndefined();
  });

  it('rejects a broken configuration at start', () => {
    expect(() =>
      readReasonPolicy(
        new ConfigReader({ servers: { reasonPolicy: { pattern: '(' } } }),
      ),
    ).toThrow(/pattern/);
    expect(() =>
      readReasonPolicy(
        new ConfigReader({
          servers: { reasonPolicy: { minLength: 20, maxLength: 5 } },
        }),
      ),
    ).toThrow(/minLength/);
  });

  it('runs the pattern in linear time on a hostile reason', () => {
    const policy = readReasonPolicy(
      new ConfigReader({
        servers: { reasonPolicy: { pattern: '^(a|aa)+$', maxLength: 5000 } },
      }),
    );
    // CPU time, not wall-clock: the bound is against a pathological path (seconds to
    // minutes), and a busy machine stretches the wall clock but not the work done.
    const started = process.cpuUsage();
    // V8's backtracking engine takes minutes on this; RE2 answers at once.
    expect(checkReason(policy, `${'a'.repeat(80)}!`)).toMatch(/does not match/);
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(1000);
  });

  it('refuses at start a pattern RE2 cannot run, naming the option', () => {
    expect(() =>
      readReasonPolicy(
        new ConfigReader({
          servers: { reasonPolicy: { pattern: '(?=OPS)OPS-\\d+' } },
        }),
      ),
    ).toThrow(/servers\.reasonPolicy\.pattern: not a valid RE2/);
  });
});
