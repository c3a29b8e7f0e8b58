import type { Condition } from '@rackside/plugin-servers-common';

/**
 * Sets one condition of a `status.conditions` list (a list-map keyed by type), the way
 * `metav1.Condition` is meant to be kept: `lastTransitionTime` moves only when the
 * status changes, so a new reason or message for the same status keeps the time the
 * status last changed. Every condition the operator writes goes through this one helper.
 */
export function setCondition<C extends Condition>(
  conditions: readonly C[] | undefined,
  next: Omit<C, 'lastTransitionTime'>,
  at: string,
): C[] {
  const current = conditions?.find(c => c.type === next.type);
  const lastTransitionTime =
    current && current.status === next.status ? current.lastTransitionTime : at;
  return [
    ...(conditions ?? []).filter(c => c.type !== next.type),
    { ...next, lastTransitionTime } as C,
  ];
}

/** A condition list without the condition of that type. */
export function withoutCondition<C extends Condition>(
  conditions: readonly C[] | undefined,
  type: string,
): C[] {
  return (conditions ?? []).filter(c => c.type !== type);
}
