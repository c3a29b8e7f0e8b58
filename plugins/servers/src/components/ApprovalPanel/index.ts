export { ApprovalPanel } from './ApprovalPanel';
export {
  AWAITING_APPROVAL,
  AWAITING_APPROVAL_FILTER,
  AWAITING_APPROVAL_LABEL,
  approversText,
  isAwaitingApproval,
  refName,
  showsApproval,
} from './approvalText';
