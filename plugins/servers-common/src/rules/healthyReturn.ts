/*
 * A return that proves health (docs/alerts.md, "A return that proves health"): a plan's
 * step, or a single maintenance that asks for it, is done only after its node has been
 * Ready for `healthyForSeconds` and, with Alertmanager configured, none of the node's alerts
 * fires. An alert still firing is waited on; the step fails on it only past the timeout and
 * once the return grace has passed since the node came back (the grace is tolerance, not a
 * floor: a node without alerts is done after its Ready period). Rackside's own silence (held
 * through the return grace) must not hide them, so they are judged through it. Alerts that
 * cannot be read (Alertmanager configured but unreachable or stalled) hold the return as a
 * firing alert would, and fail it at the timeout saying so. A node whose
 * BMC reports its hardware Critical is not back healthy either, nor one whose reading is
 * unknown (too old, or the last one failed: docs/hardware-health.md, "Age and errors").
 *
 * The operator decides with this function from fresh state at the moment it would end the
 * step; the backend may show the same verdict.
 */
import {
  alertMatchesNode,
  renderAlertMatchers,
  type AlertNode,
} from './alertMatchers';
import type { AlertSnapshot } from './alertGate';
import { alertListText } from './alertGate';
import { alertFires, type AlertState } from './racksideSilences';
import {
  hardwareReadingState,
  type HardwareHealthFacts,
} from './hardwareHealth';

/** What the verdict reads. Times in ms since the epoch. */
export interface HealthyReturnInput {
  /** When the node came back (the check starts here; grace and timeout count from it). */
  returnedAt: number;
  /** Since when the node is Ready (its Ready condition's transition); undefined: not Ready now. */
  readySince?: number;
  now: number;
  healthyForSeconds: number;
  timeoutSeconds: number;
  /** The return grace: alerts firing within it since returnedAt are waited out, never failed on. */
  graceMs: number;
  /**
   * The node's alerts that fire (see {@link nodeAlertsFiring}); undefined: no Alertmanager
   * configured, only the Ready part applies; unknown: holds the return (and fails it at
   * the timeout, saying the alert state was unknown).
   */
  alerts?:
    | { known: true; firing: readonly AlertState[] }
    | { known: false; reason: string };
  /**
   * The node's BMC health reading (ServerBMC `status.health`); a Critical rollup is not a
   * healthy return, nor is an unknown one (older than two sweep intervals, or the last
   * read failed): it is waited on and fails at the timeout saying why
   * (docs/hardware-health.md). Absent: no BMC or no reading, not checked.
   */
  hardware?: HardwareHealthFacts;
}

export type HealthyReturnVerdict =
  | { kind: 'healthy'; message: string }
  /** Not yet: look again at `recheckAt` at the latest (alerts may resolve sooner). */
  | { kind: 'waiting'; message: string; recheckAt: number; deadline: number }
  | { kind: 'failed'; message: string };

/** The node's alerts that fire for a healthy return: matched by the node's matchers, seen through Rackside's silences. */
export function nodeAlertsFiring(
  templates: readonly string[],
  node: AlertNode,
  snapshot: Extract<AlertSnapshot, { known: true }>,
): AlertState[] {
  const matchers = renderAlertMatchers(templates, node);
  return snapshot.alerts.filter(
    alert =>
      alertMatchesNode(matchers, alert.labels) &&
      alertFires(alert, snapshot.racksideSilenceIds, {
        throughRacksideSilences: true,
      }),
  );
}

/** Whether the return is healthy now, not yet, or failed (past the timeout). */
export function healthyReturnVerdict(
  input: HealthyReturnInput,
): HealthyReturnVerdict {
  const { returnedAt, now } = input;
  // Alerts that fire while the node settles are waited out, never failed on, until the
  // return grace has passed: a step fails no sooner than its grace ends.
  const deadline = Math.max(
    returnedAt + input.timeoutSeconds * 1000,
    returnedAt + input.graceMs,
  );
  const healthyForMs = input.healthyForSeconds * 1000;
  // Ready counts from the return at the earliest: a Ready condition that did not flip
  // during a quick reboot is no proof of the time since.
  const readyFrom =
    input.readySince === undefined
      ? undefined
      : Math.max(input.readySince, returnedAt);
  const readyAt =
    readyFrom === undefined ? undefined : readyFrom + healthyForMs;
  const problems: string[] = [];
  const waits: number[] = [];
  if (readyAt === undefined) {
    problems.push('not Ready');
  } else if (now < readyAt) {
    // Stable words (no running count): the status is written only when they change.
    problems.push(
      `Ready since ${new Date(readyFrom!).toISOString()}, ${
        input.healthyForSeconds
      } s needed`,
    );
    waits.push(readyAt);
  }
  // Unknown alerts hold the return as firing ones do (docs/alerts.md, "When Alertmanager
  // cannot be read"): a node whose alerts nobody can see is not proven healthy.
  if (input.alerts?.known === false) {
    problems.push(`alert state unknown: ${input.alerts.reason}`);
  } else if (input.alerts?.known === true && input.alerts.firing.length > 0) {
    problems.push(`alerts firing: ${alertListText(input.alerts.firing)}`);
  }
  // The same decision as the typed-name rung's (hardwareReadingState): Critical, or a
  // reading nobody can trust any more, is no proof of a healthy return.
  const hardware = hardwareReadingState(input.hardware, now);
  if (hardware.state === 'critical' || hardware.state === 'unknown') {
    problems.push(hardware.reason);
  }
  if (problems.length === 0) {
    return {
      kind: 'healthy',
      message: `healthy: Ready for ${input.healthyForSeconds} s${
        input.alerts?.known === true ? ', no alert firing' : ''
      }`,
    };
  }
  if (now >= deadline) {
    return {
      kind: 'failed',
      message: `not healthy ${
        input.timeoutSeconds
      } s after it came back: ${problems.join('; ')}`,
    };
  }
  return {
    kind: 'waiting',
    message: `healthy return: ${problems.join('; ')}`,
    recheckAt: Math.min(deadline, ...waits),
    deadline,
  };
}
