/*
 * A PodDisruptionBudget as a plan's step wait reads it (docs/plans.md): whether it is
 * healthy, nothing of its selector or its pods.
 */
import type { RawKubeObject } from '../../clients/types';
import { slimIdentity, type SlimIdentity } from './identity';

/** What a PodDisruptionBudget is kept as: its identity and its health. */
export interface PodDisruptionBudgetHealth extends SlimIdentity {
  status?: { currentHealthy?: number; desiredHealthy?: number };
}

/** Keeps a budget's identity and `status.currentHealthy` / `desiredHealthy`. */
export function slimPodDisruptionBudget(
  obj: RawKubeObject,
): PodDisruptionBudgetHealth & RawKubeObject {
  const status = (obj as PodDisruptionBudgetHealth).status;
  return {
    ...slimIdentity(obj),
    status: {
      currentHealthy: status?.currentHealthy,
      desiredHealthy: status?.desiredHealthy,
    },
  };
}
