export { slimIdentity } from './identity';
export type { SlimIdentity } from './identity';
export { slimNode } from './node';
export { slimPod } from './pod';
export { slimPodDisruptionBudget } from './podDisruptionBudget';
export type { PodDisruptionBudgetHealth } from './podDisruptionBudget';
