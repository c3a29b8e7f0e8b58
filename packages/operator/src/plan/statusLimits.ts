/*
 * A MaintenancePlan's status within its schema (crds/rackside.dev_maintenanceplans.yaml):
 * every message is cut to its maxLength before it is written, saying how much was left
 * out, so a plan of many long node names or a step refused with a long pod list never
 * makes a status write fail (a status that cannot be written shows nothing at all).
 */
import type { MaintenancePlanStatus } from '@rackside/plugin-servers-common';

/** status.message and status.waiting.message: maxLength in the CRD. */
export const PLAN_MESSAGE_MAX = 4096;
/** status.nodes[].message: maxLength in the CRD. */
export const STEP_MESSAGE_MAX = 1024;
/** status.conditions[].message: maxLength in the CRD. */
export const CONDITION_MESSAGE_MAX = 32768;

/** Room kept for the "... and N more" that says what was cut. */
const SUFFIX_ROOM = 48;

/**
 * `text`, at most `max` characters. A list ("a; b; c" or "a, b, c") is cut after its last
 * whole item that fits, then "... and N more" (items); any other text is cut with
 * "... and N more characters".
 */
export function cutText(text: string, max: number): string {
  if (text.length <= max) return text;
  const head = text.slice(0, max - SUFFIX_ROOM);
  for (const separator of ['; ', ', ']) {
    const at = head.lastIndexOf(separator);
    if (at > head.length / 2) {
      const more = text.slice(at + separator.length).split(separator).length;
      return `${head.slice(0, at)} ... and ${more} more`;
    }
  }
  return `${head}... and ${text.length - head.length} more characters`;
}

/** The status with every message cut to its limit. */
export function fitPlanStatus(
  status: MaintenancePlanStatus,
): MaintenancePlanStatus {
  const fitted: MaintenancePlanStatus = { ...status };
  if (status.message !== undefined) {
    fitted.message = cutText(status.message, PLAN_MESSAGE_MAX);
  }
  if (status.waiting) {
    fitted.waiting = {
      ...status.waiting,
      message: cutText(status.waiting.message, PLAN_MESSAGE_MAX),
    };
  }
  if (status.nodes) {
    fitted.nodes = status.nodes.map(step =>
      step.message === undefined || step.message.length <= STEP_MESSAGE_MAX
        ? step
        : { ...step, message: cutText(step.message, STEP_MESSAGE_MAX) },
    );
  }
  if (status.conditions) {
    fitted.conditions = status.conditions.map(c =>
      c.message && c.message.length > CONDITION_MESSAGE_MAX
        ? { ...c, message: cutText(c.message, CONDITION_MESSAGE_MAX) }
        : c,
    );
  }
  return fitted;
}
