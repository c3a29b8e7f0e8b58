import type { CeremonyLevel, CeremonyRaise, GuardVerdict } from './types';
import type { ServerAction } from '../permissions';

/**
 * The ceremony ladder (docs/architecture.md, "The rules and who calls them", decision 0001 section 5). The backend enforces it
 * with {@link checkCeremony}; the frontend only renders what {@link ceremonyFor} says, so
 * the dialog and the check can never ask for different things.
 */

export type { CeremonyLevel, CeremonyRaise } from './types';

/** What a submission must carry. Every action carries a reason. */
export interface CeremonyRequirements {
  reason: true;
  /** A pre-flight token: the user acknowledged the impact they were shown. */
  preflightAck: boolean;
  /** The node name, typed by the user. */
  typedName: boolean;
  /**
   * The reason must be typed out in a free-text field, never picked from suggestions:
   * spending the last margin is written down in the user's own words.
   */
  typedReason: boolean;
}

/** How the hazard dialog marks itself. */
export interface CeremonyHint {
  icon: 'warning';
  title: string;
}

/** The ceremony an action carries. `hint` is present on the hazard tier only. */
export interface Ceremony {
  level: CeremonyLevel;
  requires: CeremonyRequirements;
  hint?: CeremonyHint;
  /**
   * Why the ceremony is above the action's own rung for a reason other than the quorum
   * (a {@link CeremonyRaise}: e.g. "the BMC reports Critical: PSU 1"); the dialog shows it.
   */
  why?: string;
}

/** What the user submitted with the action (the request body plus the route's node). */
export interface CeremonySubmission {
  reason: string;
  preflightToken?: string;
  typedName?: string;
  nodeName: string;
}

/** The title of the hazard dialog. */
export const HAZARD_TITLE = 'This consumes the last of the quorum margin';

/** The action's own rung, before the guard's verdict is taken into account. */
const ACTION_LEVELS: Record<
  ServerAction,
  Exclude<CeremonyLevel, 'hazard' | 'refused'>
> = {
  uncordon: 'reason',
  cordon: 'reason',
  'maintenance-abandon': 'reason',
  'power-on': 'reason',
  drain: 'preflight',
  reboot: 'typed-name',
  shutdown: 'typed-name',
  // Each ends with a reboot: the ceremony of one.
  upgrade: 'typed-name',
  firmware: 'typed-name',
};

function requirements(
  preflightAck: boolean,
  typedName: boolean,
  typedReason: boolean,
): CeremonyRequirements {
  return { reason: true, preflightAck, typedName, typedReason };
}

/**
 * The ceremony for an action given the guard's verdict, and a raise (see
 * `hardwareHealth.ts`) when something else asks for a higher rung.
 *
 * A hazard keeps the action's pre-flight acknowledgement (the impact still has to be seen)
 * and adds the typed name and typed reason. A refusal is never turned into a ceremony:
 * no dialog, however frightening, is the path to breaking quorum. A raise lifts an action
 * below the typed name to it (its pre-flight acknowledgement unchanged) and never lowers
 * or replaces a higher rung; its `why` is kept on every rung it reaches but a refusal.
 */
export function ceremonyFor(
  action: ServerAction,
  verdict: GuardVerdict,
  raise?: CeremonyRaise,
): Ceremony {
  const own = ownCeremony(action, verdict);
  if (!raise || own.level === 'refused') return own;
  const raised: Ceremony = raise.why ? { ...own, why: raise.why } : { ...own };
  if (own.level === 'reason' || own.level === 'preflight') {
    raised.level = raise.level;
    raised.requires = { ...own.requires, typedName: true };
  }
  return raised;
}

function ownCeremony(action: ServerAction, verdict: GuardVerdict): Ceremony {
  const level = ACTION_LEVELS[action];
  const preflightAck = level !== 'reason';
  if (verdict === 'refuse') {
    return { level: 'refused', requires: requirements(false, false, false) };
  }
  if (verdict === 'hazard') {
    return {
      level: 'hazard',
      requires: requirements(preflightAck, true, true),
      hint: { icon: 'warning', title: HAZARD_TITLE },
    };
  }
  return {
    level,
    requires: requirements(preflightAck, level === 'typed-name', false),
  };
}

/** The guard verdict a ceremony level stands for. */
function verdictOfLevel(level: CeremonyLevel): GuardVerdict {
  if (level === 'refused') return 'refuse';
  return level === 'hazard' ? 'hazard' : 'allow';
}

/**
 * The ceremony of an action at a level, as {@link ceremonyFor} gives it: the list route
 * sends only the level, and the browser rebuilds the rest with this. A typed-name level
 * above the action's own rung is a raise; `why` (which the list does not send) may be
 * given to show it.
 */
export function ceremonyAt(
  action: ServerAction,
  level: CeremonyLevel,
  why?: string,
): Ceremony {
  const raised =
    level === 'typed-name' && ACTION_LEVELS[action] !== 'typed-name';
  return ceremonyFor(
    action,
    verdictOfLevel(level),
    raised ? { level: 'typed-name', why: why ?? '' } : undefined,
  );
}

/**
 * What is wrong with a submission, as sentences for a person; empty means it satisfies
 * the ceremony. The backend answers 400 with these. The pre-flight token is only checked
 * for presence here: whether it still binds the current impact is the backend's 409.
 * Whether the reason meets the deployment's reason policy is checked separately.
 */
export function checkCeremony(
  ceremony: Ceremony,
  submission: CeremonySubmission,
): string[] {
  if (ceremony.level === 'refused') {
    return ['This action is refused; no ceremony can allow it.'];
  }
  const problems: string[] = [];
  if (submission.reason.trim() === '') {
    problems.push('A reason is required.');
  }
  if (ceremony.requires.preflightAck && !submission.preflightToken?.trim()) {
    problems.push(
      'Acknowledge the pre-flight impact: the request carries no pre-flight token.',
    );
  }
  if (ceremony.requires.typedName) {
    const typed = submission.typedName?.trim() ?? '';
    if (typed === '') {
      problems.push(`Type the node name ${submission.nodeName} to confirm.`);
    } else if (typed !== submission.nodeName) {
      problems.push(
        `The typed name "${typed}" does not match the node ${submission.nodeName}.`,
      );
    }
  }
  return problems;
}
