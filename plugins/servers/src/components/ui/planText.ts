import type {
  PlanPhase,
  PlanResponse,
  PlanStepPhase,
} from '@rackside/plugin-servers-common';
import { formatTime } from './maintenanceText';

type ChipColor = 'default' | 'error' | 'success' | 'warning' | 'info';

/** The colour of a plan's or a step's phase chip. */
export function planPhaseColor(phase: PlanPhase | PlanStepPhase): ChipColor {
  switch (phase) {
    case 'Complete':
    case 'Done':
      return 'success';
    case 'Failed':
    case 'Refused':
      return 'error';
    case 'Waiting':
    case 'AwaitingApproval':
    case 'Paused':
    case 'Cancelled':
      return 'warning';
    case 'Running':
      return 'info';
    default:
      return 'default';
  }
}

/** "3 of 6 done, 2 running, 1 failed": a plan's counts as a sentence. */
export function planProgressText(plan: PlanResponse): string {
  const c = plan.counts;
  const parts = [`${c.done} of ${c.total} done`];
  if (c.running) parts.push(`${c.running} running`);
  if (c.failed) parts.push(`${c.failed} failed`);
  if (c.refused) parts.push(`${c.refused} refused`);
  if (c.skipped) parts.push(`${c.skipped} skipped`);
  return parts.join(', ');
}

/** What a waiting plan waits on, as a sentence. */
export function waitingText(plan: PlanResponse): string | undefined {
  const w = plan.waiting;
  if (!w) return undefined;
  if (w.on === 'authorization') {
    return `Waiting since ${formatTime(w.since)}: ${w.message}`;
  }
  // A step's servers back Ready, with no alert firing, for healthyForSeconds.
  const onHealthyReturn = w.on === 'healthyReturn';
  let what = `the gate ${w.gate ?? w.on}`;
  if (w.on === 'window') what = 'the maintenance window';
  else if (onHealthyReturn) what = "the step's healthy return";
  let until = '';
  if (w.until) {
    until =
      w.on === 'window'
        ? ` It opens at ${formatTime(w.until)}.`
        : ` It times out at ${formatTime(w.until)}.`;
  }
  return `Waiting on ${what} since ${formatTime(w.since)}: ${
    w.message
  }${until}`;
}
