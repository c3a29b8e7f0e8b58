/*
 * A request an approval holds, read alike whether it is a NodeMaintenance or a
 * MaintenancePlan: its nodes, who asked and why, its approval, and whether the caller
 * may see it (a maintenance: its node; a plan: every node of it; hidden and absent are
 * the same 404).
 */
import { NotFoundError } from '@backstage/errors';
import {
  isTerminalPhase,
  isTerminalPlanPhase,
  type Approval,
  type NodeMaintenancePreflight,
  type PlanAcknowledgement,
} from '@rackside/plugin-servers-common';
import type { ServerReadScope } from '../access/serverGrant';
import { serverResourceOf } from '../access/visibleNodes';
import type { ApprovalRequestRef } from '../approval/notices';
import type {
  ClusterSnapshot,
  ClusterState,
  MaintenanceObject,
  PlanObject,
} from '../cluster/types';
import type { ApprovalRef } from './ApprovalsService';

/** One held (or once held) request, as the approval routes read it. */
export interface HeldRequest {
  ref: ApprovalRef;
  intent: string;
  nodes: string[];
  requestedBy?: string;
  reason: string;
  createdAt?: string;
  approval?: Approval;
  resourceVersion?: string;
  /** It ended (a terminal phase, or a cancelled plan): there is nothing left to approve. */
  ended: boolean;
  /** What the requester acknowledged. */
  acknowledged?: NodeMaintenancePreflight | PlanAcknowledgement;
  maintenance?: MaintenanceObject;
  plan?: PlanObject;
}

export function heldMaintenance(
  cluster: string,
  m: MaintenanceObject,
): HeldRequest {
  const phase = m.status?.phase;
  return {
    ref: { cluster, kind: 'maintenance', name: m.metadata.name },
    intent: m.spec.intent,
    nodes: [m.spec.nodeName],
    requestedBy: m.spec.requestedBy,
    reason: m.spec.reason,
    createdAt: m.metadata.creationTimestamp,
    approval: m.spec.approval,
    resourceVersion: m.metadata.resourceVersion,
    ended: phase !== undefined && isTerminalPhase(phase),
    acknowledged: m.spec.preflight,
    maintenance: m,
  };
}

/** A plan's nodes: its steps' once the operator listed them, else the ones it names. */
export function planNodeNames(p: PlanObject): string[] {
  return p.status?.nodes?.length
    ? p.status.nodes.map(n => n.name)
    : [...(p.spec.nodes ?? [])];
}

export function heldPlan(cluster: string, p: PlanObject): HeldRequest {
  return {
    ref: { cluster, kind: 'plan', name: p.metadata.name },
    intent: p.spec.intent,
    nodes: planNodeNames(p),
    requestedBy: p.spec.requestedBy,
    reason: p.spec.reason,
    createdAt: p.metadata.creationTimestamp,
    approval: p.spec.approval,
    resourceVersion: p.metadata.resourceVersion,
    ended: isTerminalPlanPhase(p.status?.phase) || p.spec.cancel !== undefined,
    acknowledged: p.spec.acknowledgements?.at(-1),
    plan: p,
  };
}

/** Whether the caller may see the request: every node of it they may read (or absent). */
export function visibleRequest(
  request: HeldRequest,
  snap: Pick<ClusterSnapshot, 'nodes'>,
  scope: ServerReadScope,
): boolean {
  const byName = new Map(snap.nodes.map(n => [n.metadata?.name ?? '', n]));
  return request.nodes.every(name => {
    const node = byName.get(name);
    if (!node) return request.ref.kind === 'plan';
    return scope.filter(serverResourceOf(request.ref.cluster, node));
  });
}

/** The held requests of a cluster from its watch caches (maintenances, then plans). */
export async function cachedRequests(
  cluster: ClusterState,
): Promise<HeldRequest[]> {
  const [maintenances, plans] = await Promise.all([
    cluster.maintenances(),
    cluster.plans?.() ?? Promise.resolve([]),
  ]);
  return [
    ...maintenances.map(m => heldMaintenance(cluster.name, m)),
    ...plans.map(p => heldPlan(cluster.name, p)),
  ];
}

/** The request named by `ref` as the watch cache has it, if any. */
export async function cachedRequest(
  cluster: ClusterState,
  ref: ApprovalRef,
): Promise<HeldRequest | undefined> {
  if (ref.kind === 'plan') {
    const plan = (await (cluster.plans?.() ?? Promise.resolve([]))).find(
      p => p.metadata.name === ref.name,
    );
    return plan && heldPlan(cluster.name, plan);
  }
  const m = (await cluster.maintenances()).find(
    x => x.metadata.name === ref.name,
  );
  return m && heldMaintenance(cluster.name, m);
}

/**
 * The request named by `ref` as the apiserver has it now (a decision is checked on it
 * and written on its resourceVersion), or as the cache has it where the cluster cannot
 * read one afresh.
 */
export async function freshRequest(
  cluster: ClusterState,
  ref: ApprovalRef,
): Promise<HeldRequest | undefined> {
  if (ref.kind === 'plan') {
    if (!cluster.readPlan) return cachedRequest(cluster, ref);
    const plan = await cluster.readPlan(ref.name);
    return plan && heldPlan(cluster.name, plan);
  }
  if (!cluster.readMaintenance) return cachedRequest(cluster, ref);
  const m = await cluster.readMaintenance(ref.name);
  return m && heldMaintenance(cluster.name, m);
}

/** The 404 of a request the caller may not see or that is not there. */
export function noRequest(ref: ApprovalRef): NotFoundError {
  return new NotFoundError(
    `no ${ref.kind === 'plan' ? 'maintenance plan' : 'maintenance'} named ${
      ref.name
    } in cluster ${ref.cluster}`,
  );
}

/** The request as the notifications name it. */
export function notifiedRequest(request: HeldRequest): ApprovalRequestRef {
  return {
    ...request.ref,
    intent: request.intent,
    nodes: request.nodes,
    requestedBy: request.requestedBy,
    reason: request.reason,
  };
}
