/*
 * The notifications of approvals (docs/approvals.md), sent by the backend replica whose
 * write made the news (a request created held, a decision): the approvers are asked,
 * with the request's page; the requester is told whom it waits for, then how it was
 * decided. Implements the approval/ port the features call after their write.
 */
import type { LoggerService } from '@backstage/backend-plugin-api';
import type { Approval } from '@rackside/plugin-servers-common';
import type { ApprovalNotifier, ApprovalRequestRef } from '../approval/notices';
import {
  maintenanceLink,
  requesterRecipients,
  sentence,
  when,
} from './messages';
import {
  NOTIFICATION_TOPICS,
  type ServersNotification,
  type ServersNotifier,
} from './notifier';

/** The path of a plan's page in the portal. */
export function planLink(cluster: string, name: string): string {
  return `/servers/plans/${encodeURIComponent(cluster)}/${encodeURIComponent(
    name,
  )}`;
}

/** The page of the request an approval is about. */
export function approvalLink(request: ApprovalRequestRef): string {
  return request.kind === 'plan'
    ? planLink(request.cluster, request.name)
    : maintenanceLink(request.cluster, request.name);
}

/** "the reboot of worker-3 (plant-a)", "the reboot plan of 12 servers (plant-a)". */
export function requestSubject(request: ApprovalRequestRef): string {
  const where = `(${request.cluster})`;
  if (request.kind === 'plan') {
    const count = request.nodes.length;
    return `the ${request.intent} plan of ${count} server${
      count === 1 ? '' : 's'
    } ${where}`;
  }
  return `the ${request.intent} of ${request.nodes.join(', ')} ${where}`;
}

const capitalised = (text: string) =>
  text.charAt(0).toUpperCase() + text.slice(1);

/** The approvers as catalog refs are read: `platform-oncall`, `alice`. */
function approverNames(approval: Approval): string {
  return approval.approvers
    .map(ref => ref.replace(/^[^:]+:([^/]+\/)?/, ''))
    .join(', ');
}

/** The approvers' notification: what is asked, by whom, why and until when. */
export function approvalAsked(
  request: ApprovalRequestRef,
  approval: Approval,
): ServersNotification {
  return {
    recipients: approval.approvers.map(ref => ref.toLowerCase()),
    link: approvalLink(request),
    scope: `approval:${request.name}`,
    topic: NOTIFICATION_TOPICS.approvals,
    severity: 'high',
    title: `Approval asked: ${requestSubject(request)}`,
    description: `${request.requestedBy ?? 'Someone'} asks for ${requestSubject(
      request,
    )}: ${sentence(request.reason)} Rule ${
      approval.rule
    } holds it until one of ${approverNames(
      approval,
    )} approves it with a fresh pre-flight; it expires ${when(
      approval.expiresAt,
    )}.`,
  };
}

/** The requester's notification of a request created held. */
export function approvalAwaited(
  request: ApprovalRequestRef,
  approval: Approval,
): ServersNotification {
  return {
    recipients: requesterRecipients(request.requestedBy),
    link: approvalLink(request),
    scope: `approval:${request.name}`,
    topic: NOTIFICATION_TOPICS.approvals,
    severity: 'normal',
    title: `${capitalised(
      requestSubject(request),
    )} awaits approval from ${approverNames(approval)}`,
    description: `Rule ${
      approval.rule
    } holds it: nothing touches the servers until one of ${approverNames(
      approval,
    )} approves it. Without an approval it ends ${when(approval.expiresAt)}.`,
  };
}

/** The requester's notification of a decision. */
export function approvalDecided(
  request: ApprovalRequestRef,
  approval: Approval,
): ServersNotification | undefined {
  const base = {
    recipients: requesterRecipients(request.requestedBy),
    link: approvalLink(request),
    scope: `approval:${request.name}`,
    topic: NOTIFICATION_TOPICS.approvals,
  };
  if (approval.approvedBy) {
    return {
      ...base,
      severity: 'normal',
      title: `${capitalised(requestSubject(request))} was approved by ${
        approval.approvedBy
      }`,
      description: `Approved ${when(
        approval.approvedAt,
      )}; the operator goes ahead, checking the impact again before it acts.`,
    };
  }
  if (approval.rejectedBy) {
    return {
      ...base,
      severity: 'high',
      title: `${capitalised(requestSubject(request))} was rejected by ${
        approval.rejectedBy
      }`,
      description: `${sentence(
        approval.rejectReason ?? 'No reason given',
      )} Rejected ${when(
        approval.rejectedAt,
      )}; nothing was done to the servers.`,
    };
  }
  return undefined;
}

/** The approval port over Rackside's notifier: sends, and logs what it could not. */
export function approvalNotifier(
  notifier: ServersNotifier,
  logger: LoggerService,
): ApprovalNotifier {
  const send = async (notices: Array<ServersNotification | undefined>) => {
    for (const n of notices) {
      if (!n || n.recipients.length === 0) continue;
      try {
        await notifier.notify(n);
      } catch (error) {
        logger.warn(
          `notifications: could not send "${n.title}" (scope ${n.scope}): ${error}`,
        );
      }
    }
  };
  return {
    held: (request, approval) =>
      send([
        approvalAsked(request, approval),
        approvalAwaited(request, approval),
      ]),
    decided: (request, approval) => send([approvalDecided(request, approval)]),
  };
}
