import {
  rungGrewPast,
  type ApprovalView,
  type CeremonyLevel,
  type NodeMaintenancePreflight,
  type PlanAcknowledgement,
  type PlanPreflightResponse,
  type PreflightCeremonyLevel,
  type PreflightResponse,
} from '@rackside/plugin-servers-common';
import { formatTime } from '../ui/maintenanceText';

/** The phase a request waits in until an approver decides (docs/approvals.md). */
export const AWAITING_APPROVAL = 'AwaitingApproval';

/** Whether a maintenance's or a plan's phase is the wait for an approval. */
export function isAwaitingApproval(phase: string | undefined): boolean {
  return phase === AWAITING_APPROVAL;
}

/**
 * Whether a maintenance or a plan shows its approval: while it waits for one, and once
 * its answer carries the approval (decided or expired).
 */
export function showsApproval(request: { phase: string }): boolean {
  const approval = (request as { approval?: unknown }).approval;
  return isAwaitingApproval(request.phase) || !!approval;
}

/** The Approvals for me page's title, and the Servers page's link to it. */
export const APPROVALS_FOR_ME = 'Approvals for me';

/** The label of the Servers page's chip and filter. */
export const AWAITING_APPROVAL_LABEL = 'Awaiting approval';

/** The Servers table's filter text that keeps the servers awaiting an approval. */
export const AWAITING_APPROVAL_FILTER = `phase=${AWAITING_APPROVAL}`;

/**
 * A catalog ref as people say it: `group:default/platform-oncall` is "platform-oncall",
 * a ref of another namespace keeps it ("ops/platform-oncall").
 */
export function refName(ref: string): string {
  const [, rest = ref] = ref.match(/^[a-z]+:(.*)$/i) ?? [];
  return rest.startsWith('default/') ? rest.slice('default/'.length) : rest;
}

/** The approvers in a sentence: "platform-oncall or alice". */
export function approversText(approvers: readonly string[]): string {
  const people = approvers.map(refName);
  if (people.length <= 1) return people.join('');
  return `${people.slice(0, -1).join(', ')} or ${people[people.length - 1]}`;
}

/** What the approval says now, in a sentence. */
export function approvalStatusText(view: ApprovalView): string {
  switch (view.state) {
    case 'awaiting':
      return `Awaiting approval from ${approversText(view.approvers)} (rule ${
        view.rule
      }), until ${formatTime(view.expiresAt)}.`;
    case 'approved':
      return `Approved by ${view.decision?.by ?? 'an approver'}${
        view.decision?.at ? ` at ${formatTime(view.decision.at)}` : ''
      } (rule ${view.rule}).`;
    case 'rejected':
      return `Rejected by ${view.decision?.by ?? 'an approver'}${
        view.decision?.at ? ` at ${formatTime(view.decision.at)}` : ''
      }: ${view.decision?.reason ?? 'no reason recorded'}.`;
    case 'expired':
      return `The approval expired at ${formatTime(
        view.expiresAt,
      )} before anyone approved it: nothing was done, and the requester must ask again.`;
    default:
      return 'This request needs no approval.';
  }
}

const RUNG_WORDS: Record<CeremonyLevel, string> = {
  reason: 'reason',
  preflight: 'pre-flight',
  'typed-name': 'typed name',
  hazard: 'hazard',
  refused: 'refused',
};

/** A ceremony rung as the panel writes it. */
export function rungText(rung: string | undefined): string {
  return rung ? RUNG_WORDS[rung as CeremonyLevel] ?? rung : '—';
}

/**
 * Whether the rung now is above the one acknowledged (a refusal is above every rung), by
 * servers-common's rule (`rungGrewPast`), to say so before the approver tries: the
 * backend applies the same rule and decides.
 */
export function rungAbove(
  acknowledged: PreflightCeremonyLevel,
  now: CeremonyLevel | undefined,
): boolean {
  return now !== undefined && rungGrewPast(acknowledged, now);
}

/** One line of the side-by-side impact: what the requester acknowledged, and now. */
export interface ImpactRow {
  /** What the line compares. */
  label: string;
  acknowledged: string;
  now: string;
  /** The two differ (the panel marks it). */
  changed: boolean;
}

function row(label: string, acknowledged: string, now: string): ImpactRow {
  return {
    label,
    acknowledged,
    now,
    changed: acknowledged !== '—' && now !== '—' && acknowledged !== now,
  };
}

function isPlanPreflight(
  p: PreflightResponse | PlanPreflightResponse | undefined,
): p is PlanPreflightResponse {
  return !!p && Array.isArray((p as PlanPreflightResponse).steps);
}

function isPlanAcknowledgement(
  a: NodeMaintenancePreflight | PlanAcknowledgement | undefined,
): a is PlanAcknowledgement {
  return !!a && typeof (a as PlanAcknowledgement).rungs === 'object';
}

function listText(list: readonly string[]): string {
  return list.length === 0 ? 'none' : list.join(', ');
}

/** Pods by namespace/name, sorted so the same set reads the same on both sides. */
function podsText(pods: ReadonlyArray<{ namespace: string; name: string }>) {
  return listText(pods.map(p => `${p.namespace}/${p.name}`).sort());
}

/** Alerts by name and severity, sorted so the same set reads the same on both sides. */
function alertsText(
  alerts: ReadonlyArray<{ alertname: string; severity?: string }>,
) {
  return listText(
    alerts
      .map(a => (a.severity ? `${a.alertname} (${a.severity})` : a.alertname))
      .sort(),
  );
}

function quorumLine(q?: {
  members: number | null;
  quorum: number | null;
  ready: number | null;
  margin: number | null;
}): string {
  if (!q || q.members === null) return '—';
  return `members ${q.members}, quorum ${q.quorum}, ready ${q.ready}, margin ${q.margin}`;
}

/**
 * The impact the requester acknowledged beside the impact now, line by line: for a
 * maintenance its rung, the pods to evict, the budgets in the way, the quorum, the pods
 * whose data is on the node and the node's firing alerts (what the request's snapshot
 * kept; what it did not keep, as a snapshot older than a field, is "—", and the alerts
 * of a cluster without Alertmanager are "—" on both sides); for a plan the rung of each
 * node's step.
 */
export function impactRows(view: ApprovalView): ImpactRow[] {
  const { acknowledged, now } = view;
  const rows: ImpactRow[] = [
    row('Ceremony', rungText(view.requestedRung), rungText(view.rungNow)),
  ];
  if (isPlanPreflight(now) || isPlanAcknowledgement(acknowledged)) {
    const ackRungs = isPlanAcknowledgement(acknowledged)
      ? acknowledged.rungs
      : {};
    const nowNodes = isPlanPreflight(now) ? now.nodes : [];
    const nodes = [
      ...new Set([...Object.keys(ackRungs), ...nowNodes.map(n => n.node)]),
    ];
    for (const node of nodes) {
      const nowNode = nowNodes.find(n => n.node === node);
      rows.push(
        row(
          `Step of ${node}`,
          rungText(ackRungs[node]),
          nowNode ? rungText(nowNode.ceremony.level) : '—',
        ),
      );
    }
    if (isPlanPreflight(now)) {
      rows.push(
        row(
          'Budgets blocking now',
          '—',
          listText(
            now.budgets
              .filter(b => b.blocksNow)
              .map(b => `${b.namespace}/${b.name}`),
          ),
        ),
      );
    }
    return rows;
  }
  const snapshot = acknowledged as NodeMaintenancePreflight | undefined;
  const server = now as PreflightResponse | undefined;
  rows.push(
    row(
      'Pods to evict',
      snapshot?.pods ? String(snapshot.pods.length) : '—',
      server ? String(server.evict.length) : '—',
    ),
    row(
      'Budgets in the way',
      snapshot?.blockingPDBs
        ? listText(snapshot.blockingPDBs.map(b => `${b.namespace}/${b.name}`))
        : '—',
      server
        ? listText(
            server.budgets
              .filter(b => b.blocksNow)
              .map(b => `${b.namespace}/${b.name}`),
          )
        : '—',
    ),
    row('Quorum', quorumLine(snapshot?.quorum), quorumLine(server?.quorum)),
    row(
      'Node-local data',
      snapshot?.nodeLocalData ? podsText(snapshot.nodeLocalData) : '—',
      server ? podsText(server.nodeLocal ?? []) : '—',
    ),
    row(
      'Alerts firing',
      snapshot?.alerts ? alertsText(snapshot.alerts) : '—',
      server?.alerts ? alertsText(server.alerts) : '—',
    ),
  );
  return rows;
}

/** When each side of the comparison was taken, for the column headers. */
export function impactTimes(view: ApprovalView): {
  acknowledged?: string;
  now?: string;
} {
  return {
    acknowledged: isPlanAcknowledgement(view.acknowledged)
      ? view.acknowledged.preflightTakenAt
      : view.acknowledged?.takenAt,
    now: view.now?.takenAt,
  };
}
