/*
 * The pre-flight: what a drain, reboot, shutdown, upgrade or firmware update of a node
 * would do now (for the last two, with what the node runs now), and the digest of what a
 * user acknowledges of it (its token is in tokens.ts).
 */
import { ConflictError } from '@backstage/errors';
import {
  budgetsAffecting,
  ceremonyFor,
  estimateDrain,
  evictedWorkloads,
  guard,
  planDrain,
  podKey,
  statefulSetsOf,
  talosVersionOfOsImage,
  type DrainContext,
  type PodDisruptionBudgetLike,
  type PodLike,
  type PreflightAction,
  type PreflightResponse,
  type PreflightVersions,
} from '@rackside/plugin-servers-common';
import crypto from 'node:crypto';
import type { ClusterSnapshot } from '../cluster/types';

/** The drain options a pre-flight is computed with. */
export interface PreflightOptions {
  deleteEmptyDirData: boolean;
  force: boolean;
  /** Evict pods whose data is on the node (docs/drain.md). */
  allowNodeLocalData: boolean;
}

/** What the pre-flight is computed from, read at request time. */
export interface PreflightInput {
  cluster: string;
  node: string;
  action: PreflightAction;
  options: PreflightOptions;
  snapshot: ClusterSnapshot;
  pods: PodLike[];
  budgets: PodDisruptionBudgetLike[];
  /**
   * The node's labels, the pods' claims and the PersistentVolumes (node-local data), and
   * the VirtualMachineInstances where the cluster has that API.
   */
  storage?: Omit<DrainContext, 'nodeName'>;
  now: Date;
}

/** The pre-flight without its token. */
export type PreflightImpact = Omit<PreflightResponse, 'token'>;

/** What a drain, reboot or shutdown of the node would do right now. */
export function computePreflight(input: PreflightInput): PreflightImpact {
  const { snapshot, node, action, options } = input;
  const plan = planDrain(input.pods, options, {
    ...input.storage,
    nodeName: node,
  });
  const budgets = budgetsAffecting(input.pods, plan.evict, input.budgets);
  const verdict = guard(
    { action, nodeName: node },
    snapshot.derivation,
    snapshot.facts,
  );
  const blockers: string[] = [];
  if (verdict.verdict === 'refuse') blockers.push(verdict.reason);
  if (plan.refused.length > 0) {
    blockers.push(
      `${
        plan.refused.length
      } pod(s) cannot be evicted with these options: ${plan.refused
        .map(r => r.message)
        .join(' ')}`,
    );
  }
  return {
    cluster: input.cluster,
    node,
    action,
    takenAt: input.now.toISOString(),
    options,
    evict: plan.evict,
    refused: plan.refused,
    daemonSet: plan.daemonSet,
    mirror: plan.mirror,
    finished: plan.finished,
    skipped: plan.skipped,
    waitCompleted: plan.waitCompleted,
    nodeLocal: plan.nodeLocal,
    statefulSets: statefulSetsOf(plan, budgets),
    orderGroups: plan.orderGroups,
    estimate: estimateDrain(plan, options),
    // Absent where the cluster has no VirtualMachineInstance API (docs/drain.md).
    ...(plan.virtualMachines ? { virtualMachines: plan.virtualMachines } : {}),
    budgets,
    ...versionsOf(snapshot, node, action),
    ...alertsOf(snapshot, node),
    workloads: evictedWorkloads(input.pods, plan.evict),
    quorum: {
      verdict: verdict.verdict,
      reason: verdict.reason,
      members: verdict.members,
      quorum: verdict.quorum,
      ready: snapshot.derivation.derived ? snapshot.derivation.ready : null,
      margin: verdict.margin,
      marginAfter: verdict.marginAfter,
    },
    ceremony: ceremonyFor(action, verdict.verdict),
    canProceed: blockers.length === 0,
    blockers,
  };
}

/**
 * What the node runs now, for an upgrade (its Talos version) or a firmware update (the
 * BMC's inventory as last read): shown beside the target, not acknowledged (a reading
 * that changes does not invalidate the pre-flight; the operator compares again).
 */
function versionsOf(
  snapshot: ClusterSnapshot,
  nodeName: string,
  action: PreflightAction,
): { versions?: PreflightVersions } {
  if (action === 'upgrade') {
    const node = snapshot.nodes.find(n => n.metadata?.name === nodeName);
    const talos = talosVersionOfOsImage(node?.status?.nodeInfo?.osImage);
    return { versions: talos ? { talos } : {} };
  }
  if (action === 'firmware') {
    const inventory = snapshot.bmcHealth.get(nodeName)?.firmware;
    return {
      versions: inventory?.length
        ? {
            // Field by field: the reading's id (its Redfish link, what a request's
            // targets name) for the portal's Components choice; nothing else of it.
            firmware: inventory.map(({ id, name, version }) => ({
              ...(id !== undefined ? { id } : {}),
              name,
              version,
            })),
          }
        : {},
    };
  }
  return {};
}

/**
 * The node's firing alerts as the cluster's Alertmanager was last read (a silenced or
 * inhibited one is not firing); none where the cluster has no Alertmanager. Not part of
 * the digest: alerts come and go on their own, so one that fires after an
 * acknowledgement does not invalidate it; the approver is shown them beside the
 * requester's (docs/approvals.md).
 */
function alertsOf(
  snapshot: ClusterSnapshot,
  nodeName: string,
): { alerts?: Array<{ alertname: string; severity?: string }> } {
  if (!snapshot.alerts) return {};
  const firing = (snapshot.alerts.byNode.get(nodeName) ?? []).filter(
    a => a.state === 'firing',
  );
  return {
    alerts: firing.map(({ alertname, severity }) =>
      severity === undefined ? { alertname } : { alertname, severity },
    ),
  };
}

/**
 * The part of an impact the user acknowledges: which pods go (and in which order group),
 * which are refused, left (skip) or waited for, which carry node-local data, the
 * estimate, the options, which budgets block now, the quorum effect and the ceremony. Counts that drift on their own
 * (how many disruptions a budget still allows) are left out, so an unrelated eviction
 * elsewhere does not invalidate an acknowledgement.
 */
export function digestOf(impact: PreflightImpact): string {
  return crypto
    .createHash('sha256')
    .update(impactDigest(impact))
    .digest('base64url');
}

/** The canonical text of what a user acknowledges of one impact (see digestOf). */
export function impactDigest(impact: PreflightImpact): string {
  const canonical = JSON.stringify({
    cluster: impact.cluster,
    node: impact.node,
    action: impact.action,
    options: impact.options,
    evict: impact.evict.map(podKey),
    refused: impact.refused.map(r => [podKey(r.pod), r.causes]),
    // What section 16 shows: a pod that gains node-local data, a rule or a new order
    // group after the acknowledgement changes what the drain does.
    skipped: (impact.skipped ?? []).map(podKey),
    waitCompleted: (impact.waitCompleted ?? []).map(podKey),
    nodeLocal: (impact.nodeLocal ?? []).map(podKey),
    orderGroups: (impact.orderGroups ?? []).map(g => [g.order, g.pods]),
    estimate: impact.estimate?.seconds,
    // A VMI that arrives, leaves or changes between migrate and shutdown changes the drain.
    virtualMachines: (impact.virtualMachines ?? []).map(v => [
      `${v.namespace}/${v.name}`,
      v.action,
    ]),
    blocking: impact.budgets
      .filter(b => b.blocksNow)
      .map(b => `${b.namespace}/${b.name}`),
    quorum: [
      impact.quorum.verdict,
      impact.quorum.members,
      impact.quorum.quorum,
      impact.quorum.ready,
    ],
    ceremony: impact.ceremony.level,
  });
  return canonical;
}

/**
 * What is kept on a NodeMaintenance of a pre-flight someone acknowledged: the requester's
 * (`spec.preflight`), or the approver's (`spec.approval.approverPreflight`).
 */
export function preflightRecord(impact: PreflightImpact, token: string) {
  const level = impact.ceremony.level;
  if (level === 'refused') {
    throw new TypeError('a refused action has no pre-flight to record');
  }
  const q = impact.quorum;
  return {
    takenAt: impact.takenAt,
    token,
    ceremony: level,
    pods: impact.evict
      .slice(0, 2000)
      .map(p => ({ namespace: p.namespace, name: p.name })),
    blockingPDBs: impact.budgets
      .filter(b => b.blocksNow)
      .slice(0, 500)
      .map(b => ({ namespace: b.namespace, name: b.name })),
    quorum:
      q.members !== null &&
      q.quorum !== null &&
      q.ready !== null &&
      q.margin !== null
        ? {
            members: q.members,
            quorum: q.quorum,
            ready: q.ready,
            margin: q.margin,
          }
        : undefined,
    // Shown to an approver beside the impact now; kept within the resource's limits.
    ...(impact.alerts
      ? {
          alerts: impact.alerts.slice(0, 100).map(a => ({
            alertname: a.alertname.slice(0, 253),
            ...(a.severity !== undefined
              ? { severity: a.severity.slice(0, 63) }
              : {}),
          })),
        }
      : {}),
    ...(impact.nodeLocal
      ? {
          nodeLocalData: impact.nodeLocal
            .slice(0, 500)
            .map(p => ({ namespace: p.namespace, name: p.name })),
        }
      : {}),
  };
}

/** A 409 that carries the current pre-flight: the impact changed, aged, or blocks the action. */
export class PreflightConflictError<
  P = PreflightResponse,
> extends ConflictError {
  constructor(message: string, readonly preflight: P) {
    super(message);
  }
}
