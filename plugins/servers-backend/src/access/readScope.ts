/*
 * What a `servers:read` decision lets a user see (docs/permissions.md, what a
 * conditional `servers:read` shows). With a conditional decision:
 *
 * - a cluster is listed when the user may read at least one of its servers, or when the
 *   decision admits the cluster on its name alone (IS_IN_CLUSTER decides it, whatever
 *   the server); an unavailable cluster (its servers unknown) is listed unless the
 *   decision rules it out by name. Its `servers` count is the readable servers only;
 * - the quorum numbers (members, quorum, ready, margin, the members going down) describe
 *   every control-plane member together, so they are shown only to a user who may read
 *   every member; otherwise the summary says it is hidden, and a guard refusal or a
 *   pre-flight carries the verdict without the numbers;
 * - a server the user may not read is answered as absent (404) by every route, actions
 *   included, so no 409 names its state or its maintenance.
 */
import {
  AuthorizeResult,
  type ConditionalPolicyDecision,
  type PermissionCondition,
  type PermissionCriteria,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import {
  describeAction,
  nodeFactsFromNode,
  type GuardResult,
  type MaintenanceResponse,
  type PreflightResponse,
  type QuorumSummaryResponse,
  type ServerAction,
} from '@rackside/plugin-servers-common';
import {
  serverPermissionRules,
  type NodeObject,
} from '@rackside/plugin-servers-node';
import { quorumSummary } from '../cluster/quorumSummary';
import { type ClusterSnapshot } from '../cluster/types';

type Criteria = PermissionCriteria<PermissionCondition<string, any>>;

const CLUSTER_RULE = serverPermissionRules.isInCluster.name;

/**
 * The decision judged on a cluster name alone: true or false when the IS_IN_CLUSTER
 * conditions settle it, undefined when it depends on the server (labels, role).
 */
export function clusterVerdict(
  criteria: Criteria,
  cluster: string,
): boolean | undefined {
  if ('allOf' in criteria) {
    const parts = criteria.allOf.map(c => clusterVerdict(c, cluster));
    if (parts.includes(false)) return false;
    return parts.every(p => p === true) ? true : undefined;
  }
  if ('anyOf' in criteria) {
    const parts = criteria.anyOf.map(c => clusterVerdict(c, cluster));
    if (parts.includes(true)) return true;
    return parts.every(p => p === false) ? false : undefined;
  }
  if ('not' in criteria) {
    const inner = clusterVerdict(criteria.not, cluster);
    return inner === undefined ? undefined : !inner;
  }
  if (criteria.rule === CLUSTER_RULE) {
    const clusters: unknown = criteria.params?.clusters;
    return Array.isArray(clusters) && clusters.includes(cluster);
  }
  return undefined;
}

const decidedKeys = new WeakMap<readonly PolicyDecision[], string>();

/**
 * Names what decisions decided, for caches of what they show: without the permission
 * client's per-request ids (with them no two requests would share). Kept per array, as a
 * reused answer (readDecisions.ts) is the same array for every read of its burst.
 */
export function decidedKey(decisions: readonly PolicyDecision[]): string {
  let key = decidedKeys.get(decisions);
  if (key === undefined) {
    key = JSON.stringify(
      decisions.map(
        ({ id: _id, ...decided }: PolicyDecision & { id?: string }) => decided,
      ),
    );
    decidedKeys.set(decisions, key);
  }
  return key;
}

/** A read decision (allowed or conditional: a denied one is a 403 before this). */
export class ReadScope {
  constructor(
    private readonly decision: PolicyDecision,
    /** Whether the decision lets the user read this node of `cluster`. */
    readonly readable: (cluster: string, node: NodeObject) => boolean,
  ) {}

  /** Names what was decided, for caches of what the decision shows ({@link decidedKey}). */
  get key(): string {
    return decidedKey([this.decision]);
  }

  get unconditional(): boolean {
    return this.decision.result === AuthorizeResult.ALLOW;
  }

  /** What the decision says of a cluster by its name alone. */
  clusterVerdict(cluster: string): boolean | undefined {
    const decision = this.decision;
    if (decision.result === AuthorizeResult.ALLOW) return true;
    if (decision.result === AuthorizeResult.DENY) return false;
    const { conditions } = decision as ConditionalPolicyDecision;
    return clusterVerdict(conditions as Criteria, cluster);
  }

  /** Whether the user may read every control-plane member of the cluster. */
  readsEveryMember(cluster: string, snap: ClusterSnapshot): boolean {
    if (this.unconditional) return true;
    return snap.nodes.every(
      node =>
        !nodeFactsFromNode(node).controlPlane || this.readable(cluster, node),
    );
  }

  /** The quorum summary this user may see. */
  quorumOf(cluster: string, snap: ClusterSnapshot): QuorumSummaryResponse {
    if (this.readsEveryMember(cluster, snap)) {
      return quorumSummary(snap.derivation);
    }
    return {
      derived: false,
      hidden: true,
      reason:
        'the quorum is shown only to users who may read every control-plane member',
    };
  }

  /** A guard result this user may see: without the numbers unless they read every member. */
  guardOf(
    cluster: string,
    snap: ClusterSnapshot,
    result: GuardResult,
    action: ServerAction,
    node: string,
  ): GuardResult {
    if (this.readsEveryMember(cluster, snap)) return result;
    const subject = describeAction(action, node);
    const reasons: Record<GuardResult['verdict'], string> = {
      refuse: `${subject} is refused: it would drop the control plane below quorum, or the quorum cannot be derived (the numbers are shown only to users who may read every control-plane member).`,
      hazard: `${subject} consumes the last of the control-plane quorum margin.`,
      allow: `${subject} keeps the control plane at or above quorum.`,
    };
    // The guard's own sentence for a virtual node names nothing but this node: keep it.
    const own = result.reason.includes('virtual node')
      ? result.reason
      : reasons[result.verdict];
    return {
      verdict: result.verdict,
      members: null,
      quorum: null,
      margin: null,
      marginAfter: null,
      reason: own,
    };
  }

  /**
   * A maintenance as this user may see it. The operator records a quorum refusal with its
   * numbers (in `refusal`, and its sentence in the history and the conditions): for a
   * user who cannot read every member, the numbers go and the sentence says why.
   */
  maintenanceOf(
    cluster: string,
    snap: ClusterSnapshot,
    m: MaintenanceResponse,
  ): MaintenanceResponse {
    const refusal = m.refusal;
    if (!refusal || refusal.members === undefined) return m;
    if (this.readsEveryMember(cluster, snap)) return m;
    const told = `${describeAction(
      m.intent as ServerAction,
      m.nodeName,
    )} was refused by the operator: it would have dropped the control plane below quorum (the numbers are shown only to users who may read every control-plane member).`;
    // The history keeps the first 1024 characters of the sentence.
    const scrub = (text: string | undefined) =>
      text && refusal.reason.startsWith(text) ? told : text;
    return {
      ...m,
      refusal: {
        reason: told,
        ...(refusal.blockingMaintenance
          ? { blockingMaintenance: refusal.blockingMaintenance }
          : {}),
      },
      history: m.history.map(h => ({ ...h, message: scrub(h.message) })),
      conditions: m.conditions.map(c => ({ ...c, message: scrub(c.message) })),
    } as MaintenanceResponse;
  }

  /** A pre-flight this user may see (its token binds the full impact all the same). */
  preflightOf(
    snap: ClusterSnapshot,
    preflight: PreflightResponse,
  ): PreflightResponse {
    if (this.readsEveryMember(preflight.cluster, snap)) return preflight;
    const guard = this.guardOf(
      preflight.cluster,
      snap,
      { ...preflight.quorum, reason: preflight.quorum.reason },
      preflight.action,
      preflight.node,
    );
    const original = preflight.quorum.reason;
    return {
      ...preflight,
      quorum: {
        verdict: guard.verdict,
        reason: guard.reason,
        members: null,
        quorum: null,
        ready: null,
        margin: null,
        marginAfter: null,
      },
      blockers: preflight.blockers.map(b =>
        b === original ? guard.reason : b,
      ),
    };
  }
}
