export { PreflightView } from './PreflightView';
export {
  disruptionsText,
  nodeLocalPods,
  podDetails,
  quorumNumbers,
  statefulSetBudgetText,
  virtualMachinesSummary,
  VM_ACTION_LABELS,
  type NodeLocalPod,
} from './preflightText';
