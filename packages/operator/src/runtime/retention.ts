/*
 * Retention (docs/architecture.md, "The maintenance lifecycle", decision 0002): a NodeMaintenance, MachineReclaim or
 * MaintenancePlan that reached a terminal phase is deleted `--retention` after it ended
 * (default 7 days; a plan only once its steps ended too, see planEndedAt). The
 * record stays in its Events (one more, RetentionExpired, says it was deleted and when it
 * ended) and in the auditor.
 *
 * Only the leader runs it (started and stopped with the other controllers), and its
 * deletes go through the same leader gate as every other write. Nothing polls: the watch
 * caches say when an object turns terminal, and a keyed queue holds one timer per object
 * until its time comes (re-checked from the cache then, at most a day apart, because a
 * timer cannot wait longer than about 24 days).
 */
import type { KubeConfig } from '@kubernetes/client-node';
import {
  isTerminalPhase,
  isTerminalPlanPhase,
  isTerminalReclaimPhase,
  machineReclaimResource,
  maintenancePlanResource,
  nodeMaintenanceResource,
  type MachineReclaim,
  type MaintenancePlan,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import {
  createWatchCache,
  objectKey,
  ResourceClient,
  resourcePath,
  type KubeObject,
  type RawKubeObject,
  type ResourceDescriptor,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import type { EventRecorder } from './events';
import { WorkQueue } from './workqueue';
import { eventsFor, statusPhaseOf } from './kube/eventsFor';
import { RetentionReason } from './lifecycle/reasons';
import { OPERATOR_FIELD_MANAGER } from './kube/fieldManager';

export const DEFAULT_RETENTION_MS = 7 * 24 * 3600 * 1000;
const DAY_MS = 24 * 3600 * 1000;

/** One kind under retention: where its objects are, and when one ended. */
export interface RetainedKind<T extends KubeObject> {
  kind: string;
  descriptor: ResourceDescriptor;
  cache: WatchCache<T & RawKubeObject>;
  /** When the object ended (ms since the epoch), or undefined while it has not. */
  endedAt(obj: T): number | 'unknown' | undefined;
  /**
   * Objects of another cache whose changes can change when one of this kind ended (a
   * plan's steps): each change looks again at the objects `ownersOf` names (their keys).
   */
  dependents?: {
    cache: WatchCache<any>;
    ownersOf(obj: any): string[];
  };
}

/** The names of the MaintenancePlans that own a NodeMaintenance (its steps' owner). */
export function planOwnersOf(obj: NodeMaintenance): string[] {
  return (obj.metadata?.ownerReferences ?? [])
    .filter(o => o.kind === 'MaintenancePlan')
    .map(o => o.name);
}

/**
 * When a MaintenancePlan ended, for retention: its completedAt once terminal, and only
 * once every step it owns has ended too (the latest of them), because deleting a plan
 * deletes its steps (owner references, Kubernetes garbage collection): a step still
 * running must never go with it, and an ended step keeps its own full retention.
 */
export function planEndedAt(
  plan: MaintenancePlan,
  steps: NodeMaintenance[],
): number | 'unknown' | undefined {
  if (!isTerminalPlanPhase(plan.status?.phase)) return undefined;
  let ended: number | 'unknown' = Date.parse(plan.status?.completedAt ?? '');
  if (!Number.isFinite(ended)) ended = 'unknown';
  for (const step of steps) {
    const at = maintenanceEndedAt(step);
    if (at === undefined) return undefined;
    if (at === 'unknown' || ended === 'unknown') {
      ended = 'unknown';
      continue;
    }
    ended = Math.max(ended, at);
  }
  return ended;
}

/** When a NodeMaintenance ended: its terminal history entry, else completedAt. */
export function maintenanceEndedAt(
  nm: NodeMaintenance,
): number | 'unknown' | undefined {
  const phase = nm.status?.phase;
  if (!phase || !isTerminalPhase(phase)) return undefined;
  const entry = [...(nm.status?.history ?? [])]
    .reverse()
    .find(h => h.phase === phase);
  const at = Date.parse(entry?.at ?? nm.status?.completedAt ?? '');
  return Number.isFinite(at) ? at : 'unknown';
}

/** When a MachineReclaim ended: the last step of its audit. */
export function reclaimEndedAt(
  mr: MachineReclaim,
): number | 'unknown' | undefined {
  const phase = mr.status?.phase;
  if (!phase || !isTerminalReclaimPhase(phase)) return undefined;
  const at = Date.parse(mr.status?.audit?.at(-1)?.at ?? '');
  return Number.isFinite(at) ? at : 'unknown';
}

export interface RetentionOptions {
  kubeConfig: KubeConfig;
  retentionMs: number;
  kinds: RetainedKind<any>[];
  recorder: EventRecorder;
  onDeleted?: (kind: string) => void;
  log?: (message: string) => void;
  now?: () => number;
}

/** Deletes terminal objects of `kinds` once `retentionMs` has passed since they ended. */
export class RetentionController {
  private queue?: WorkQueue;
  private unsubscribe: (() => void)[] = [];
  /** Objects that say nothing of when they ended: counted from when this replica saw them. */
  private readonly firstSeen = new Map<string, number>();
  private readonly clients = new Map<string, ResourceClient<KubeObject>>();
  private readonly now: () => number;

  constructor(private readonly options: RetentionOptions) {
    this.now = options.now ?? (() => Date.now());
    for (const k of options.kinds) {
      this.clients.set(
        k.kind,
        new ResourceClient<KubeObject>(options.kubeConfig, k.descriptor, {
          fieldManager: OPERATOR_FIELD_MANAGER,
        }),
      );
    }
  }

  /** Call when leading, once the caches have synced. */
  start(): void {
    if (this.queue) return;
    const queue = new WorkQueue(key => this.reconcile(key), {
      workers: 2,
      onError: (key, error) =>
        this.options.log?.(`retention ${key}: ${(error as Error).message}`),
    });
    this.queue = queue;
    for (const k of this.options.kinds) {
      const enqueue = (obj: KubeObject) =>
        queue.add(`${k.kind}|${objectKey(obj)}`);
      this.unsubscribe.push(
        k.cache.on('add', enqueue),
        k.cache.on('update', enqueue),
        k.cache.on('delete', obj =>
          this.firstSeen.delete(`${k.kind}|${objectKey(obj)}`),
        ),
      );
      for (const obj of k.cache.list()) enqueue(obj);
      const dependents = k.dependents;
      if (dependents) {
        const wake = (obj: KubeObject) => {
          for (const owner of dependents.ownersOf(obj))
            queue.add(`${k.kind}|${owner}`);
        };
        this.unsubscribe.push(
          dependents.cache.on('add', wake),
          dependents.cache.on('update', wake),
          dependents.cache.on('delete', wake),
        );
      }
    }
  }

  stop(): void {
    this.queue?.stop();
    this.queue = undefined;
    for (const off of this.unsubscribe) off();
    this.unsubscribe = [];
  }

  /** Deletes the object if its time has come; else says when to look again. */
  private async reconcile(key: string): Promise<{ requeueAfterMs?: number }> {
    const [kindName, objKey] = key.split('|');
    const kind = this.options.kinds.find(k => k.kind === kindName);
    const obj = kind?.cache.get(objKey);
    if (!kind || !obj) return {};
    let ended = kind.endedAt(obj);
    if (ended === undefined) {
      this.firstSeen.delete(key);
      return {};
    }
    if (ended === 'unknown') {
      if (!this.firstSeen.has(key)) this.firstSeen.set(key, this.now());
      ended = this.firstSeen.get(key)!;
    }
    const due = ended + this.options.retentionMs;
    const wait = due - this.now();
    if (wait > 0) return { requeueAfterMs: Math.min(wait, DAY_MS) };

    const { name, namespace, uid } = obj.metadata;
    // The uid precondition: never a newer object that took the same name.
    await this.clients.get(kind.kind)!.delete(name!, {
      namespace,
      preconditions: uid ? { uid } : undefined,
      ignoreNotFound: true,
    });
    this.firstSeen.delete(key);
    const endedIso = new Date(ended).toISOString();
    const message = `deleted: ${kind.kind} ${
      namespace ? `${namespace}/` : ''
    }${name} ended at ${endedIso} (phase ${statusPhaseOf(
      obj,
    )}), retention ${Math.round(this.options.retentionMs / 1000)} s`;
    this.options.log?.(`retention: ${message}`);
    this.options.onDeleted?.(kind.kind);
    await eventsFor(this.options.recorder, {
      apiVersion: kind.descriptor.group
        ? `${kind.descriptor.group}/${kind.descriptor.version}`
        : kind.descriptor.version,
      kind: kind.kind,
    }).record(obj, 'Normal', RetentionReason.RetentionExpired, message);
    return {};
  }
}

/**
 * Retention of NodeMaintenances (from the operator's cache) and MachineReclaims of the
 * operator's namespace (a cache of its own, watching only while this replica leads).
 */
export function createRetention(options: {
  kubeConfig: KubeConfig;
  namespace: string;
  retentionMs: number;
  maintenances: WatchCache<NodeMaintenance & RawKubeObject>;
  recorder: EventRecorder;
  onDeleted?: (kind: string) => void;
  log?: (message: string) => void;
}) {
  let reclaims: WatchCache<MachineReclaim & RawKubeObject> | undefined;
  let plans: WatchCache<MaintenancePlan & RawKubeObject> | undefined;
  let controller: RetentionController | undefined;
  const stepsOf = (plan: MaintenancePlan) =>
    options.maintenances
      .list()
      .filter(m =>
        (m.metadata?.ownerReferences ?? []).some(
          o => o.kind === 'MaintenancePlan' && o.uid === plan.metadata?.uid,
        ),
      );
  return {
    async start() {
      if (controller) return;
      reclaims = createWatchCache<MachineReclaim & RawKubeObject>({
        kubeConfig: options.kubeConfig,
        path: resourcePath(machineReclaimResource, options.namespace),
        name: 'machinereclaims (retention)',
      });
      plans = createWatchCache<MaintenancePlan & RawKubeObject>({
        kubeConfig: options.kubeConfig,
        path: resourcePath(maintenancePlanResource),
        name: 'maintenanceplans (retention)',
      });
      const mine = new RetentionController({
        kubeConfig: options.kubeConfig,
        retentionMs: options.retentionMs,
        recorder: options.recorder,
        onDeleted: options.onDeleted,
        log: options.log,
        kinds: [
          {
            kind: 'NodeMaintenance',
            descriptor: nodeMaintenanceResource,
            cache: options.maintenances,
            endedAt: maintenanceEndedAt,
          },
          {
            kind: 'MachineReclaim',
            descriptor: machineReclaimResource,
            cache: reclaims,
            endedAt: reclaimEndedAt,
          },
          {
            kind: 'MaintenancePlan',
            descriptor: maintenancePlanResource,
            cache: plans,
            endedAt: (plan: MaintenancePlan) =>
              planEndedAt(plan, stepsOf(plan)),
            dependents: {
              cache: options.maintenances,
              ownersOf: planOwnersOf,
            },
          },
        ],
      });
      controller = mine;
      await Promise.all([
        options.maintenances.synced,
        reclaims.synced,
        plans.synced,
      ]);
      if (controller === mine) mine.start();
    },
    async stop() {
      controller?.stop();
      controller = undefined;
      const caches = [reclaims, plans];
      reclaims = undefined;
      plans = undefined;
      await Promise.all(caches.map(c => c?.stop()));
    },
  };
}
