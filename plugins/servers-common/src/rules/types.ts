/*
 * The shapes every rule of servers-common speaks in: the quorum guard's verdict and the
 * ceremony's rungs. They live below the rules so that a rule may read another's result
 * without importing the other rule (the guard, the ceremony and the maintenance rules
 * each import these, never each other for a type).
 */

/** allow: go ahead; hazard: allowed behind the hazard ceremony; refuse: no ceremony can allow it. */
export type GuardVerdict = 'allow' | 'hazard' | 'refuse';

/**
 * The verdict with the numbers that explain it. The numbers are null when no quorum could
 * be derived; `marginAfter` is the margin once the action has taken effect.
 */
export interface GuardResult {
  verdict: GuardVerdict;
  members: number | null;
  quorum: number | null;
  margin: number | null;
  marginAfter: number | null;
  /** A sentence for a person, with the numbers. */
  reason: string;
}

/** The rungs of the ladder, from the lightest to the one that cannot be climbed. */
export type CeremonyLevel =
  | 'reason'
  | 'preflight'
  | 'typed-name'
  | 'hazard'
  | 'refused';

/**
 * A rung the ceremony is raised to for a reason beyond the guard's verdict (e.g. the BMC
 * reports the hardware Critical), with that reason as a sentence the dialog shows.
 */
export interface CeremonyRaise {
  level: 'typed-name';
  why: string;
}
