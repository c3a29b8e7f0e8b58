import type { Config } from '@backstage/config';
import {
  compilePattern,
  type CompiledPattern,
} from '@rackside/plugin-servers-common';

/** How reasons given with actions are checked (`servers.reasonPolicy`). */
export interface ReasonPolicy {
  minLength: number;
  maxLength: number;
  /** RE2, linear time (servers-common's compilePattern): the reason is a person's text. */
  pattern?: CompiledPattern;
  hint?: string;
}

export function readReasonPolicy(config: Config): ReasonPolicy {
  const c = config.getOptionalConfig('servers.reasonPolicy');
  const minLength = c?.getOptionalNumber('minLength') ?? 10;
  const maxLength = c?.getOptionalNumber('maxLength') ?? 500;
  if (minLength < 1 || maxLength < minLength) {
    throw new Error(
      `servers.reasonPolicy: need 1 <= minLength (${minLength}) <= maxLength (${maxLength})`,
    );
  }
  const source = c?.getOptionalString('pattern');
  const pattern =
    source === undefined
      ? undefined
      : compilePattern(source, 'servers.reasonPolicy.pattern');
  return { minLength, maxLength, pattern, hint: c?.getOptionalString('hint') };
}

/** The problem with a reason, or undefined when it passes. */
export function checkReason(
  policy: ReasonPolicy,
  reason: string,
): string | undefined {
  const text = reason.trim();
  if (text.length < policy.minLength) {
    return `reason must be at least ${policy.minLength} characters`;
  }
  if (text.length > policy.maxLength) {
    return `reason must be at most ${policy.maxLength} characters`;
  }
  if (policy.pattern && !policy.pattern.matchesWithin(text)) {
    return `reason does not match the required format${
      policy.hint ? `: ${policy.hint}` : ''
    }`;
  }
  return undefined;
}
