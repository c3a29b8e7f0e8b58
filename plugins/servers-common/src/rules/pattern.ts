/**
 * Every regular expression a person or a configuration gives Rackside (alert gates and
 * matchers, drain rules, the reason policy) is compiled here, and only here, with RE2's
 * semantics: matching takes time linear in the text, whatever the pattern, so a pattern
 * like `(.|.|.|.)*!` cannot stall the backend's event loop or the operator's leader. The
 * syntax is RE2's (Go's `regexp`, which Alertmanager uses), so a pattern that works in
 * Alertmanager works here, and one that needs backtracking (`\1`, look-arounds) is refused
 * here as it is there (docs/limits.md, "Patterns"). `re2js` is pure JavaScript: the plan
 * dialog in the browser runs the same engine as the backend and the operator.
 *
 * The lint rule in .eslintrc.js forbids `new RegExp(...)` with a non-literal argument
 * anywhere else.
 */
import { RE2JS } from 're2js';

/** The longest pattern accepted, in characters. */
export const MAX_PATTERN_LENGTH = 1024;

/** A compiled pattern. */
export interface CompiledPattern {
  /** The pattern as given. */
  readonly source: string;
  /** Whether the whole text matches (anchored at both ends, as Alertmanager matches). */
  matchesWhole(text: string): boolean;
  /** Whether the pattern matches somewhere in the text (unanchored, like RegExp#test). */
  matchesWithin(text: string): boolean;
}

/**
 * Why a pattern is refused, or undefined: longer than {@link MAX_PATTERN_LENGTH}, or not
 * RE2 syntax (the engine's own words: "invalid or unsupported Perl syntax: `(?=`").
 * `what` names it in the message, e.g. `alertnames "Foo("`.
 */
export function patternError(
  source: string,
  what = `pattern ${JSON.stringify(source.slice(0, 80))}`,
): string | undefined {
  if (typeof source !== 'string') return `${what}: must be a string`;
  if (source.length > MAX_PATTERN_LENGTH) {
    return `${what}: longer than ${MAX_PATTERN_LENGTH} characters (${source.length})`;
  }
  try {
    compiledEngine(source);
    return undefined;
  } catch (error) {
    return `${what}: not a valid RE2 regular expression (${
      (error as Error).message
    })`;
  }
}

// A few hundred distinct patterns at most (gates, matchers, rules), each used for many
// texts: compile each once. Bounded so a stream of distinct patterns cannot grow it.
const CACHE_LIMIT = 512;
const cache = new Map<string, RE2JS>();

function compiledEngine(source: string): RE2JS {
  const hit = cache.get(source);
  if (hit) return hit;
  const engine = RE2JS.compile(source);
  if (cache.size >= CACHE_LIMIT) {
    cache.delete(cache.keys().next().value as string);
  }
  cache.set(source, engine);
  return engine;
}

/**
 * The pattern compiled; throws an Error with {@link patternError}'s message when it is
 * refused. Matching is linear in the text.
 */
export function compilePattern(source: string, what?: string): CompiledPattern {
  const error = patternError(source, what);
  if (error) throw new Error(error);
  const engine = compiledEngine(source);
  return {
    source,
    matchesWhole: text => engine.matches(text),
    matchesWithin: text => engine.matcher(text).find(),
  };
}

/** Escapes text so that a pattern matches it literally. */
export function quotePattern(text: string): string {
  return text.replace(/[\\^$.*+?()[\]{}|]/g, '\\$&');
}
