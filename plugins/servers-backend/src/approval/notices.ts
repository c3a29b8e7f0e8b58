/*
 * Who is told of an approval, as a port: the features that write an approval (a request
 * created held, a decision) call it after their write succeeded, so only the backend
 * replica whose write won tells anyone. The notifications feature implements it
 * (notifications/approvalNotices.ts) and plugin.ts hands it over; features stay leaves.
 */
import type {
  Approval,
  ApprovalRequestKind,
} from '@rackside/plugin-servers-common';

/** The request an approval is about, as a notification names it. */
export interface ApprovalRequestRef {
  cluster: string;
  kind: ApprovalRequestKind;
  /** The NodeMaintenance's or MaintenancePlan's name. */
  name: string;
  intent: string;
  nodes: string[];
  requestedBy?: string;
  reason: string;
}

/** Never throws: an implementation logs what it could not send (the write stands). */
export interface ApprovalNotifier {
  /** A request was created held: the approvers, and the requester ("awaits approval from"). */
  held(request: ApprovalRequestRef, approval: Approval): Promise<void>;
  /** An approver decided: the requester is told who and why. */
  decided(request: ApprovalRequestRef, approval: Approval): Promise<void>;
}
