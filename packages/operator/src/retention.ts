/*
 * Retention (DESIGN.md section 4, ADR 0107): a NodeMaintenance or MachineReclaim that
 * reached a terminal phase is deleted `--retention` after it ended (default 7 days). The
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
  isTerminalReclaimPhase,
  machineReclaimResource,
  nodeMaintenanceResource,
  type MachineReclaim,
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
import { eventsFor } from './kube/eventsFor';
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
    }${name} ended at ${endedIso} (phase ${
      (obj as any).status?.phase
    }), retention ${Math.round(this.options.retentionMs / 1000)} s`;
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
  let controller: RetentionController | undefined;
  return {
    async start() {
      if (controller) return;
      reclaims = createWatchCache<MachineReclaim & RawKubeObject>({
        kubeConfig: options.kubeConfig,
        path: resourcePath(machineReclaimResource, options.namespace),
        name: 'machinereclaims (retention)',
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
        ],
      });
      controller = mine;
      await Promise.all([options.maintenances.synced, reclaims.synced]);
      if (controller === mine) mine.start();
    },
    async stop() {
      controller?.stop();
      controller = undefined;
      const cache = reclaims;
      reclaims = undefined;
      await cache?.stop();
    },
  };
}
