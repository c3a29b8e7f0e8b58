/**
 * What a drain does to the pods of one node (docs/architecture.md, "The maintenance lifecycle"; docs/drain.md): which pods it
 * evicts and in which order, which it leaves in place or only waits for, which it refuses
 * to touch without an explicit option (node-local data among them), which disruption
 * budgets stand in the way and how long it should take. The backend's pre-flight, the
 * operator's drain and the plan pre-flight call these same functions, so what the user
 * acknowledged is what gets executed.
 */
import {
  classifyVirtualMachines,
  type DrainVirtualMachine,
  type VirtualMachineInstanceLike,
} from './virtualMachines';

export * from './virtualMachines';

/** The parts of a Pod the drain rules read. */
export interface PodLike {
  metadata?: {
    name?: string;
    namespace?: string;
    labels?: Record<string, string>;
    annotations?: Record<string, string>;
    ownerReferences?: Array<{
      kind?: string;
      name?: string;
      controller?: boolean;
    }>;
    deletionTimestamp?: string | Date;
  };
  spec?: {
    nodeName?: string;
    terminationGracePeriodSeconds?: number;
    volumes?: PodVolumeLike[];
  };
  status?: { phase?: string };
}

/** The parts of a pod volume the drain rules read. */
export interface PodVolumeLike {
  name?: string;
  emptyDir?: unknown;
  hostPath?: { path?: string } | null;
  persistentVolumeClaim?: { claimName?: string } | null;
  /** A generic ephemeral volume: its claim is named `<pod>-<volume>`. */
  ephemeral?: unknown;
}

/** The parts of a PersistentVolumeClaim the drain rules read. */
export interface PersistentVolumeClaimLike {
  metadata?: { name?: string; namespace?: string };
  /** `spec.volumeName` is the binding (set by the binder, or pre-bound by the user). */
  spec?: { volumeName?: string };
}

/** A node selector requirement (PersistentVolume node affinity). */
export interface NodeSelectorRequirementLike {
  key: string;
  operator: string;
  values?: string[];
}

/** The parts of a PersistentVolume the drain rules read. */
export interface PersistentVolumeLike {
  metadata?: { name?: string };
  spec?: {
    local?: unknown;
    hostPath?: unknown;
    nodeAffinity?: {
      required?: {
        nodeSelectorTerms?: Array<{
          matchExpressions?: NodeSelectorRequirementLike[];
          matchFields?: NodeSelectorRequirementLike[];
        }>;
      } | null;
    } | null;
    [key: string]: unknown;
  };
}

/**
 * What the drain knows of the node and its storage. The callers read the claims of the
 * pods' namespaces and the PersistentVolumes; without them only hostPath is seen.
 */
export interface DrainContext {
  nodeName: string;
  /** The node's labels: its `kubernetes.io/hostname` is what local PVs name. */
  nodeLabels?: Record<string, string>;
  claims?: readonly PersistentVolumeClaimLike[];
  volumes?: readonly PersistentVolumeLike[];
  /**
   * The kubevirt.io/v1 VirtualMachineInstances the caller listed (any node); absent where
   * the cluster has no such API, and then the plan has no `virtualMachines`.
   */
  virtualMachines?: readonly VirtualMachineInstanceLike[];
}

/**
 * The drain rule of a pod: `skip` (left in place, like a DaemonSet pod) or
 * `wait-completed` (waited for until it finishes, never evicted). Read from the pod's
 * annotation first, then its label of the same key.
 */
export const DRAIN_RULE_KEY = 'rackside.dev/drain';
/** The eviction order of a pod: an integer, lower first; pods without it are order 0. */
export const DRAIN_ORDER_KEY = 'rackside.dev/drain-order';
/** What `terminationGracePeriodSeconds` is when a pod does not set it. */
export const DEFAULT_GRACE_PERIOD_SECONDS = 30;

/** The parts of a policy/v1 PodDisruptionBudget the drain rules read. */
export interface PodDisruptionBudgetLike {
  metadata?: { name?: string; namespace?: string };
  spec?: { selector?: LabelSelectorLike | null };
  status?: { disruptionsAllowed?: number };
}

/** A Kubernetes label selector. */
export interface LabelSelectorLike {
  matchLabels?: Record<string, string>;
  matchExpressions?: Array<{
    key: string;
    operator: string;
    values?: string[];
  }>;
}

/** Options of a drain (`spec.drain` of a NodeMaintenance). */
export interface DrainRuleOptions {
  /** Evict pods with emptyDir volumes; their data is lost. */
  deleteEmptyDirData?: boolean;
  /** Evict pods without a controller; nothing recreates them. */
  force?: boolean;
  /**
   * Evict pods whose data lives on this node (local or node-pinned PersistentVolumes,
   * hostPath): they cannot run elsewhere until the node is back.
   */
  allowNodeLocalData?: boolean;
  /** Overrides every pod's grace period in the Eviction. */
  gracePeriodSeconds?: number;
}

/**
 * Why a drain will not evict a pod unless told to. `invalidRule` (a drain rule it cannot
 * read) is allowed by no option: the rule has to be fixed.
 */
export type DrainRefusalCause =
  | 'emptyDir'
  | 'unmanaged'
  | 'nodeLocalData'
  | 'invalidRule';

/** A pod as the drain plan names it. */
export interface DrainPod {
  namespace: string;
  name: string;
  /** `Kind/name` of the controlling owner, if any. */
  controller?: string;
  /** The pod's own termination grace period. */
  gracePeriodSeconds?: number;
  /** Already being deleted: the drain only waits for it. */
  terminating: boolean;
  /** Its `rackside.dev/drain-order`; planDrain always sets it (0 without one). */
  order?: number;
  /** The StatefulSet that controls it, if one does. */
  statefulSet?: string;
  /** Its data on this node, one sentence per volume; absent when there is none. */
  nodeLocalData?: string[];
}

/** A pod the drain refuses to evict without an option. */
export interface RefusedDrainPod {
  pod: DrainPod;
  causes: DrainRefusalCause[];
  /** A sentence for a person: what is wrong and which option allows it. */
  message: string;
}

/** The drain's verdict over every pod of a node. */
export interface DrainPlan {
  /** Pods the drain evicts and waits for. */
  evict: DrainPod[];
  /** Pods the drain refuses to evict with the options given. */
  refused: RefusedDrainPod[];
  /** DaemonSet pods: left in place (the DaemonSet would recreate them at once). */
  daemonSet: DrainPod[];
  /** Static (mirror) pods: the kubelet owns them; the apiserver cannot evict them. */
  mirror: DrainPod[];
  /** Succeeded or Failed pods: already gone as far as the drain is concerned. */
  finished: DrainPod[];
  /** `rackside.dev/drain: skip`: left in place. */
  skipped: DrainPod[];
  /** `rackside.dev/drain: wait-completed`: waited for until they finish, not evicted. */
  waitCompleted: DrainPod[];
  /** Pods to evict whose data is on the node (evicted only with allowNodeLocalData). */
  nodeLocal: DrainPod[];
  /** The eviction groups, ascending: a group is evicted once the one before is gone. */
  orderGroups: Array<{ order: number; pods: string[] }>;
  /**
   * The VMIs on the node and whether each is live-migrated, shut down or blocks the
   * drain; absent where the cluster has no VirtualMachineInstance API.
   */
  virtualMachines?: DrainVirtualMachine[];
}

/** The annotation the kubelet puts on the mirror of a static pod. */
export const MIRROR_POD_ANNOTATION = 'kubernetes.io/config.mirror';

/** `namespace/name`. */
export function podKey(pod: { namespace: string; name: string }): string {
  return `${pod.namespace}/${pod.name}`;
}

function controllerOf(pod: PodLike) {
  return pod.metadata?.ownerReferences?.find(ref => ref.controller === true);
}

/** The pod as the plan names it. */
export function drainPodOf(pod: PodLike): DrainPod {
  const controller = controllerOf(pod);
  const order = readOrder(pod);
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    controller: controller
      ? `${controller.kind}/${controller.name}`
      : undefined,
    gracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds,
    terminating: !!pod.metadata?.deletionTimestamp,
    order: typeof order === 'number' ? order : 0,
    statefulSet:
      controller?.kind === 'StatefulSet' ? controller.name : undefined,
  };
}

/** A drain rule: the annotation, else the label of the same key. */
function ruleValue(pod: PodLike, key: string): string | undefined {
  return pod.metadata?.annotations?.[key] ?? pod.metadata?.labels?.[key];
}

/** The pod's drain rule, or a sentence saying why it cannot be read. */
function readRule(
  pod: PodLike,
): 'skip' | 'wait-completed' | undefined | { invalid: string } {
  const value = ruleValue(pod, DRAIN_RULE_KEY);
  if (value === undefined) return undefined;
  if (value === 'skip' || value === 'wait-completed') return value;
  return {
    invalid: `${DRAIN_RULE_KEY} is ${JSON.stringify(
      value.slice(0, 63),
    )}; it must be skip or wait-completed`,
  };
}

/** The pod's order, or a sentence saying why it cannot be read. */
function readOrder(pod: PodLike): number | { invalid: string } {
  const value = ruleValue(pod, DRAIN_ORDER_KEY);
  if (value === undefined) return 0;
  // Bounded so that no order is lost to floating point or sorts oddly.
  if (/^-?[0-9]{1,9}$/.test(value)) return Number(value);
  return {
    invalid: `${DRAIN_ORDER_KEY} is ${JSON.stringify(
      value.slice(0, 63),
    )}; it must be an integer of at most 9 digits`,
  };
}

/** Whether a PersistentVolume's required node affinity names this node. */
function affinityNamesNode(
  pv: PersistentVolumeLike,
  context: DrainContext,
): boolean {
  const names = new Set([context.nodeName]);
  const hostname = context.nodeLabels?.['kubernetes.io/hostname'];
  if (hostname) names.add(hostname);
  const terms = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms ?? [];
  // Named, not merely satisfied: a zonal disk's affinity holds here too, yet it moves.
  return terms.some(term =>
    [
      ...(term.matchExpressions ?? []).filter(
        r => r.key === 'kubernetes.io/hostname',
      ),
      ...(term.matchFields ?? []).filter(r => r.key === 'metadata.name'),
    ].some(
      r => r.operator === 'In' && (r.values ?? []).some(v => names.has(v)),
    ),
  );
}

/** Sentences naming the pod's data on this node; empty when there is none. */
function nodeLocalDataOf(pod: PodLike, context?: DrainContext): string[] {
  const found: string[] = [];
  const namespace = pod.metadata?.namespace ?? '';
  for (const volume of pod.spec?.volumes ?? []) {
    if (volume.hostPath) {
      found.push(
        `hostPath volume ${volume.name ?? ''} (${volume.hostPath.path ?? ''})`,
      );
      continue;
    }
    const claimName =
      volume.persistentVolumeClaim?.claimName ??
      (volume.ephemeral ? `${pod.metadata?.name}-${volume.name}` : undefined);
    if (!claimName || !context) continue;
    const claim = context.claims?.find(
      c =>
        c.metadata?.name === claimName && c.metadata?.namespace === namespace,
    );
    const volumeName = claim?.spec?.volumeName;
    if (!volumeName) continue;
    const pv = context.volumes?.find(v => v.metadata?.name === volumeName);
    if (!pv) continue;
    if (pv.spec?.local || pv.spec?.hostPath) {
      // A local PV on another node is not this drain's concern.
      const affinity = pv.spec?.nodeAffinity?.required?.nodeSelectorTerms;
      if (affinity?.length && !affinityNamesNode(pv, context)) continue;
      found.push(
        `PersistentVolumeClaim ${claimName} is bound to local PersistentVolume ${volumeName}`,
      );
    } else if (affinityNamesNode(pv, context)) {
      found.push(
        `PersistentVolumeClaim ${claimName} is bound to PersistentVolume ${volumeName}, whose node affinity names ${context.nodeName}`,
      );
    }
  }
  return found;
}

/** Succeeded and Failed pods hold nothing: they count as gone. */
export function isFinishedPod(pod: PodLike): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

function refusalText(
  cause: DrainRefusalCause,
  pod: DrainPod,
  nodeName: string,
  invalid: string[],
): string {
  switch (cause) {
    case 'emptyDir':
      return 'it has emptyDir volumes whose data is lost on eviction (allowed with deleteEmptyDirData)';
    case 'unmanaged':
      return 'no controller owns it, so nothing recreates it after eviction (allowed with force)';
    case 'nodeLocalData':
      return `its data is on this node (${(pod.nodeLocalData ?? []).join(
        '; ',
      )}), so it cannot run elsewhere until ${nodeName} is back (allowed with allowNodeLocalData)`;
    case 'invalidRule':
      return `its drain rule cannot be read: ${invalid.join(
        '; ',
      )} (fix or remove it; no option allows it)`;
    default:
      return cause;
  }
}

/** Sorts pods by namespace, then name, so plans compare and read the same way. */
function byKey(a: DrainPod, b: DrainPod): number {
  return podKey(a).localeCompare(podKey(b));
}

/**
 * Sorts the pods of one node into what a drain does with each. Mirror pods, then
 * finished pods, then DaemonSet pods, then pods with `rackside.dev/drain: skip` are set
 * aside, and `wait-completed` pods are only waited for; every other pod is evicted, in
 * its order group, unless it has emptyDir data, no controller or data on the node and the
 * options do not allow that, or carries a drain rule that cannot be read.
 */
export function planDrain(
  pods: readonly PodLike[],
  options: DrainRuleOptions = {},
  context?: DrainContext,
): DrainPlan {
  const plan: DrainPlan = {
    evict: [],
    refused: [],
    daemonSet: [],
    mirror: [],
    finished: [],
    skipped: [],
    waitCompleted: [],
    nodeLocal: [],
    orderGroups: [],
  };
  const nodeName =
    context?.nodeName ?? pods.find(p => p.spec?.nodeName)?.spec?.nodeName ?? '';
  for (const pod of pods) {
    const view = drainPodOf(pod);
    const local = nodeLocalDataOf(pod, context);
    if (local.length) view.nodeLocalData = local;
    if (pod.metadata?.annotations?.[MIRROR_POD_ANNOTATION] !== undefined) {
      plan.mirror.push(view);
      continue;
    }
    if (isFinishedPod(pod)) {
      plan.finished.push(view);
      continue;
    }
    const controller = controllerOf(pod);
    if (controller?.kind === 'DaemonSet') {
      plan.daemonSet.push(view);
      continue;
    }
    const rule = readRule(pod);
    const order = readOrder(pod);
    const invalid = [rule, order]
      .filter((r): r is { invalid: string } => typeof r === 'object' && !!r)
      .map(r => r.invalid);
    if (invalid.length === 0 && rule === 'skip') {
      plan.skipped.push(view);
      continue;
    }
    if (invalid.length === 0 && rule === 'wait-completed') {
      plan.waitCompleted.push(view);
      continue;
    }
    const causes: DrainRefusalCause[] = [];
    // A pod already being deleted is only waited for: refusing it would protect nothing.
    if (!view.terminating) {
      if (!controller && !options.force) causes.push('unmanaged');
      const hasEmptyDir = (pod.spec?.volumes ?? []).some(v => !!v.emptyDir);
      if (hasEmptyDir && !options.deleteEmptyDirData) causes.push('emptyDir');
      if (local.length && !options.allowNodeLocalData) {
        causes.push('nodeLocalData');
      }
      if (invalid.length) causes.push('invalidRule');
    }
    if (causes.length) {
      plan.refused.push({
        pod: view,
        causes,
        message: `${podKey(view)}: ${causes
          .map(c => refusalText(c, view, nodeName, invalid))
          .join('; ')}`,
      });
    } else {
      plan.evict.push(view);
      if (local.length) plan.nodeLocal.push(view);
    }
  }
  for (const list of [
    plan.evict,
    plan.daemonSet,
    plan.mirror,
    plan.finished,
    plan.skipped,
    plan.waitCompleted,
    plan.nodeLocal,
  ]) {
    list.sort(byKey);
  }
  plan.refused.sort((a, b) => byKey(a.pod, b.pod));
  const groups = new Map<number, string[]>();
  for (const pod of plan.evict) {
    const order = pod.order ?? 0;
    groups.set(order, [...(groups.get(order) ?? []), podKey(pod)]);
  }
  plan.orderGroups = [...groups.entries()]
    .sort(([a], [b]) => a - b)
    .map(([order, keys]) => ({ order, pods: keys }));
  if (context?.virtualMachines) {
    plan.virtualMachines = classifyVirtualMachines(
      context.virtualMachines,
      nodeName,
    );
  }
  return plan;
}

/** How long a drain should take when nothing blocks it (budgets can make it longer). */
export interface DrainEstimate {
  /** The sum over the order groups of each group's slowest grace period. */
  seconds: number;
  /** The pod with the longest grace period among those evicted. */
  slowest?: { pod: string; seconds: number };
  groups: Array<{ order: number; seconds: number }>;
  /** wait-completed pods: the drain waits for them however long they run. */
  waitsForCompletion: string[];
}

/**
 * The expected duration of a drain from the grace periods of the pods it evicts: the
 * groups run one after the other, the pods of a group at once. The drain's own
 * `gracePeriodSeconds` replaces each pod's, as it does in the Eviction.
 */
export function estimateDrain(
  plan: DrainPlan,
  options: DrainRuleOptions = {},
): DrainEstimate {
  const graceOf = (pod: DrainPod) =>
    options.gracePeriodSeconds ??
    pod.gracePeriodSeconds ??
    DEFAULT_GRACE_PERIOD_SECONDS;
  const estimate: DrainEstimate = {
    seconds: 0,
    groups: [],
    waitsForCompletion: plan.waitCompleted.map(podKey),
  };
  const byKeyPods = new Map(plan.evict.map(p => [podKey(p), p]));
  for (const group of plan.orderGroups) {
    let slowest = 0;
    for (const key of group.pods) {
      const pod = byKeyPods.get(key)!;
      const seconds = graceOf(pod);
      slowest = Math.max(slowest, seconds);
      if (!estimate.slowest || seconds > estimate.slowest.seconds) {
        estimate.slowest = { pod: key, seconds };
      }
    }
    estimate.groups.push({ order: group.order, seconds: slowest });
    estimate.seconds += slowest;
  }
  return estimate;
}

/** Whether a label selector selects these labels (a null selector selects nothing). */
export function selectorMatches(
  selector: LabelSelectorLike | null | undefined,
  labels: Record<string, string> = {},
): boolean {
  if (!selector) return false;
  for (const [key, value] of Object.entries(selector.matchLabels ?? {})) {
    if (labels[key] !== value) return false;
  }
  for (const expr of selector.matchExpressions ?? []) {
    const has = Object.prototype.hasOwnProperty.call(labels, expr.key);
    const values = expr.values ?? [];
    switch (expr.operator) {
      case 'In':
        if (!has || !values.includes(labels[expr.key])) return false;
        break;
      case 'NotIn':
        if (has && values.includes(labels[expr.key])) return false;
        break;
      case 'Exists':
        if (!has) return false;
        break;
      case 'DoesNotExist':
        if (has) return false;
        break;
      default:
        // An operator we do not know selects nothing rather than everything.
        return false;
    }
  }
  return true;
}

/** A disruption budget that covers pods the drain evicts. */
export interface DrainBudget {
  namespace: string;
  name: string;
  /** `status.disruptionsAllowed` right now. */
  disruptionsAllowed: number;
  /** The evicted pods it covers, as `namespace/name`. */
  pods: string[];
  /** It allows no disruption now: its pods' evictions are refused (429) until it does. */
  blocksNow: boolean;
}

/**
 * The budgets that cover pods to evict, with whether each blocks now. A budget that
 * allows some disruptions but fewer than it covers slows the drain without stopping it.
 */
export function budgetsAffecting(
  pods: readonly PodLike[],
  evict: readonly DrainPod[],
  budgets: readonly PodDisruptionBudgetLike[],
): DrainBudget[] {
  const wanted = new Set(evict.map(podKey));
  const labelsOf = new Map<string, Record<string, string>>();
  for (const pod of pods) {
    const key = podKey(drainPodOf(pod));
    if (wanted.has(key)) labelsOf.set(key, pod.metadata?.labels ?? {});
  }
  const result: DrainBudget[] = [];
  for (const pdb of budgets) {
    const namespace = pdb.metadata?.namespace ?? '';
    const covered = evict
      .filter(p => p.namespace === namespace)
      .map(podKey)
      .filter(key => selectorMatches(pdb.spec?.selector, labelsOf.get(key)));
    if (covered.length === 0) continue;
    const allowed = pdb.status?.disruptionsAllowed ?? 0;
    result.push({
      namespace,
      name: pdb.metadata?.name ?? '',
      disruptionsAllowed: allowed,
      pods: covered,
      blocksNow: allowed < 1,
    });
  }
  return result.sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name),
  );
}

/** A StatefulSet with pods the drain evicts, and the budgets that cover them. */
export interface DrainStatefulSet {
  namespace: string;
  name: string;
  pods: string[];
  budgets: Array<{
    name: string;
    disruptionsAllowed: number;
    blocksNow: boolean;
  }>;
}

/** The StatefulSets a drain evicts pods of, each with the budgets over those pods. */
export function statefulSetsOf(
  plan: DrainPlan,
  budgets: readonly DrainBudget[],
): DrainStatefulSet[] {
  const sets = new Map<string, DrainStatefulSet>();
  for (const pod of plan.evict) {
    if (!pod.statefulSet) continue;
    const id = `${pod.namespace}/${pod.statefulSet}`;
    let set = sets.get(id);
    if (!set) {
      set = {
        namespace: pod.namespace,
        name: pod.statefulSet,
        pods: [],
        budgets: [],
      };
      sets.set(id, set);
    }
    set.pods.push(podKey(pod));
  }
  for (const set of sets.values()) {
    set.budgets = budgets
      .filter(
        b =>
          b.namespace === set.namespace &&
          b.pods.some(p => set.pods.includes(p)),
      )
      .map(b => ({
        name: b.name,
        disruptionsAllowed: b.disruptionsAllowed,
        blocksNow: b.blocksNow,
      }));
  }
  return [...sets.values()].sort(
    (a, b) =>
      a.namespace.localeCompare(b.namespace) || a.name.localeCompare(b.name),
  );
}

/**
 * The budget a 429 names. The apiserver's cause reads "The disruption budget NAME needs
 * ..."; when it does not, the first budget of the pod's namespace that selects the pod.
 */
export function budgetOfRefusal(
  causes: readonly string[],
  pod: PodLike,
  budgets: readonly PodDisruptionBudgetLike[],
): string | undefined {
  for (const cause of causes) {
    const named = /disruption budget ([a-z0-9][-a-z0-9.]*)/i.exec(cause);
    if (named) return named[1];
  }
  return budgets.find(
    b =>
      b.metadata?.namespace === pod.metadata?.namespace &&
      selectorMatches(b.spec?.selector, pod.metadata?.labels),
  )?.metadata?.name;
}

/**
 * The label that ties a pod to a catalog entity: the Backstage Kubernetes plugin's
 * convention (the entity carries the same value in its `backstage.io/kubernetes-id`
 * annotation).
 */
export const KUBERNETES_ID_LABEL = 'backstage.io/kubernetes-id';

/** The pods of one catalog entity (by `backstage.io/kubernetes-id`) a drain evicts. */
export interface EvictedWorkload {
  kubernetesId: string;
  /** As namespace/name, sorted. */
  pods: string[];
}

/**
 * The workloads a drain disrupts: the pods of `evict` (what {@link planDrain} evicts)
 * labelled {@link KUBERNETES_ID_LABEL}, grouped by the label's value. The pre-flight
 * shows them and the backend tells their owners when the drain starts, from this one
 * function.
 */
export function evictedWorkloads(
  pods: PodLike[],
  evict: Array<{ namespace: string; name: string }>,
): EvictedWorkload[] {
  const evicted = new Set(evict.map(podKey));
  const byId = new Map<string, string[]>();
  for (const pod of pods) {
    const id = pod.metadata?.labels?.[KUBERNETES_ID_LABEL]?.trim();
    const key = podKey({
      namespace: pod.metadata?.namespace ?? '',
      name: pod.metadata?.name ?? '',
    });
    if (!id || !evicted.has(key)) continue;
    byId.set(id, [...(byId.get(id) ?? []), key]);
  }
  return [...byId]
    .map(([kubernetesId, keys]) => ({ kubernetesId, pods: keys.sort() }))
    .sort((a, b) => a.kubernetesId.localeCompare(b.kubernetesId));
}
