/*
 * Patterns people and configurations give Rackside (docs/limits.md, "Patterns"): written
 * from the side that would stall a backtracking engine or sneak past RE2's syntax.
 */
import {
  compilePattern,
  MAX_PATTERN_LENGTH,
  patternError,
  quotePattern,
} from './pattern';

// Each of these takes V8's backtracking RegExp exponential time on the text beside it.
const PATHOLOGICAL: Array<[string, string]> = [
  ['(.|.|.|.)*!', 'a'.repeat(30)],
  ['(a+)+$', `${'a'.repeat(40)}!`],
  ['(a|aa)+b', 'a'.repeat(60)],
  ['(x+x+)+y', 'x'.repeat(40)],
];

describe('compilePattern', () => {
  it.each(PATHOLOGICAL)(
    '%s on a hostile text answers at once, whole and within',
    (source, text) => {
      const pattern = compilePattern(source);
      const started = process.hrtime.bigint();
      expect(pattern.matchesWhole(text)).toBe(false);
      expect(pattern.matchesWithin(text)).toBe(false);
      // Linear: far below one second even on a loaded machine (V8 takes minutes).
      expect(Number(process.hrtime.bigint() - started) / 1e6).toBeLessThan(
        1000,
      );
    },
  );

  it('matches the whole text or within it, as Alertmanager anchors', () => {
    const pattern = compilePattern('Disk.*|CPU');
    expect(pattern.matchesWhole('DiskFull')).toBe(true);
    expect(pattern.matchesWhole('CPU')).toBe(true);
    expect(pattern.matchesWhole('CPUHigh')).toBe(false);
    expect(pattern.matchesWithin('HighCPUHigh')).toBe(true);
  });

  it('keeps an alternation inside its anchors: Foo)|(.* cannot match everything', () => {
    expect(patternError('Foo)|(.*')).toMatch(/not a valid RE2/);
  });

  it.each([
    ['\\1', 'a back-reference'],
    ['(a)\\1', 'a back-reference'],
    ['(?=x)x', 'a look-ahead'],
    ['(?!x)y', 'a negative look-ahead'],
    ['(?<=x)y', 'a look-behind'],
    ['a{1001}', 'a repeat past RE2s limit'],
    ['((a{100}){100}){100}', 'a program past RE2s size'],
  ])('refuses %s (%s), naming the pattern', source => {
    const error = patternError(source);
    expect(error).toContain(JSON.stringify(source));
    expect(error).toMatch(/not a valid RE2 regular expression/);
    expect(() => compilePattern(source)).toThrow(error!);
  });

  it('refuses a pattern past the length cap, and says the cap', () => {
    const long = 'a'.repeat(MAX_PATTERN_LENGTH + 1);
    expect(patternError(long)).toMatch(
      `longer than ${MAX_PATTERN_LENGTH} characters (${
        MAX_PATTERN_LENGTH + 1
      })`,
    );
    expect(patternError('a'.repeat(MAX_PATTERN_LENGTH))).toBeUndefined();
  });

  it('names the pattern as the caller words it', () => {
    expect(patternError('(', 'alertnames "("')).toMatch(/^alertnames "\(": /);
  });

  it('quotes text so it matches only itself', () => {
    const name = 'worker.1+(a)';
    const pattern = compilePattern(quotePattern(name));
    expect(pattern.matchesWhole(name)).toBe(true);
    expect(pattern.matchesWhole('workerx1+(a)')).toBe(false);
  });

  it('answers the same after a thousand other patterns passed through its cache', () => {
    const first = compilePattern('keep-me');
    for (let i = 0; i < 1000; i++) compilePattern(`p${i}`);
    expect(first.matchesWhole('keep-me')).toBe(true);
    expect(compilePattern('keep-me').matchesWhole('keep-me')).toBe(true);
  });
});
