/**
 * What a drain does to the pods of one node (DESIGN section 4): which pods it evicts,
 * which it leaves in place, which it refuses to touch without an explicit option, and
 * which disruption budgets stand in the way. The backend's pre-flight and the operator's
 * drain call these same functions, so what the user acknowledged is what gets executed.
 */

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
    volumes?: Array<{ name?: string; emptyDir?: unknown }>;
  };
  status?: { phase?: string };
}

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
}

/** Why a drain will not evict a pod unless told to. */
export type DrainRefusalCause = 'emptyDir' | 'unmanaged';

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
  return {
    namespace: pod.metadata?.namespace ?? '',
    name: pod.metadata?.name ?? '',
    controller: controller
      ? `${controller.kind}/${controller.name}`
      : undefined,
    gracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds,
    terminating: !!pod.metadata?.deletionTimestamp,
  };
}

/** Succeeded and Failed pods hold nothing: they count as gone. */
export function isFinishedPod(pod: PodLike): boolean {
  const phase = pod.status?.phase;
  return phase === 'Succeeded' || phase === 'Failed';
}

const REFUSAL_TEXT: Record<DrainRefusalCause, string> = {
  emptyDir:
    'it has emptyDir volumes whose data is lost on eviction (allowed with deleteEmptyDirData)',
  unmanaged:
    'no controller owns it, so nothing recreates it after eviction (allowed with force)',
};

/** Sorts pods by namespace, then name, so plans compare and read the same way. */
function byKey(a: DrainPod, b: DrainPod): number {
  return podKey(a).localeCompare(podKey(b));
}

/**
 * Sorts the pods of one node into what a drain does with each. Mirror pods, then
 * finished pods, then DaemonSet pods are set aside; every other pod is evicted unless it
 * has emptyDir data or no controller and the options do not allow that.
 */
export function planDrain(
  pods: readonly PodLike[],
  options: DrainRuleOptions = {},
): DrainPlan {
  const plan: DrainPlan = {
    evict: [],
    refused: [],
    daemonSet: [],
    mirror: [],
    finished: [],
  };
  for (const pod of pods) {
    const view = drainPodOf(pod);
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
    const causes: DrainRefusalCause[] = [];
    // A pod already being deleted is only waited for: refusing it would protect nothing.
    if (!view.terminating) {
      if (!controller && !options.force) causes.push('unmanaged');
      const hasEmptyDir = (pod.spec?.volumes ?? []).some(v => !!v.emptyDir);
      if (hasEmptyDir && !options.deleteEmptyDirData) causes.push('emptyDir');
    }
    if (causes.length) {
      plan.refused.push({
        pod: view,
        causes,
        message: `${podKey(view)}: ${causes
          .map(c => REFUSAL_TEXT[c])
          .join('; ')}`,
      });
    } else {
      plan.evict.push(view);
    }
  }
  for (const list of [plan.evict, plan.daemonSet, plan.mirror, plan.finished]) {
    list.sort(byKey);
  }
  plan.refused.sort((a, b) => byKey(a.pod, b.pod));
  return plan;
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
