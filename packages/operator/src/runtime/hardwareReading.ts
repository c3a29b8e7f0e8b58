/*
 * When a ServerBMC update is news to a healthy return: what servers-common's
 * hardwareReadingState makes of the reading changed (e.g. unknown to OK once the sweep
 * wrote again, or OK to Critical). Status writes that change nothing of it (a new readAt of
 * the same fresh OK reading) wake nothing.
 */
import {
  hardwareReadingState,
  type ServerBMC,
} from '@rackside/plugin-servers-common';

function knowledgeOf(bmc: ServerBMC | undefined, now: number): string {
  const known = hardwareReadingState(bmc?.status?.health, now);
  return 'reason' in known ? `${known.state}|${known.reason}` : known.state;
}

/** Whether `bmc` says something else of the hardware than `old` did (judged now). */
export function hardwareKnowledgeChanged(
  bmc: ServerBMC | undefined,
  old: ServerBMC | undefined,
  now: number = Date.now(),
): boolean {
  return knowledgeOf(bmc, now) !== knowledgeOf(old, now);
}
