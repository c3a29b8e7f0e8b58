/*
 * Discovery of a TalosCluster (docs/architecture.md, "Adding machines") as a table on the
 * one runner (runtime/lifecycle/table.ts). A TalosCluster has no phase of its own: its
 * state is whether a discovery pass is due.
 *
 *   NotDue -> wait     probed within spec.discovery.intervalSeconds, its spec unchanged
 *                      since, and nothing woke it: looked at again when the pass is due
 *   Due    -> probe    the cluster's talosconfig is read: the reconciler probes every
 *                      address with its CA and records what each is (reconciler.ts)
 *          -> record   the talosconfig cannot be read (without the CA a member cannot be
 *                      told from a foreign machine, so nothing is probed): Ready False
 *                      TalosconfigUnavailable and a Warning, then retried at the smaller
 *                      of the interval and a minute
 *          -> wait     the same, already on record
 *
 * A cluster is due when woken (a spec change, e.g. an added address, or a reclaim of it
 * is Done), when its spec changed since the last pass, when it was never probed, or when
 * the interval has passed. A row reads through ports and answers a decision, never
 * writing; reconciler.ts writes it.
 */
import type {
  LocalSecretRef,
  TalosCluster,
  TalosClusterStatus,
} from '@rackside/plugin-servers-common';
import {
  parseTalosconfig,
  type TalosClientIdentity,
} from '@rackside/plugin-servers-node';
import { setCondition } from '../runtime/lifecycle/conditions';
import type { Wait } from '../runtime/lifecycle/table';

export const READY_CONDITION = 'Ready';

/** Where retries go when the cluster's talosconfig cannot be read. */
export const TALOSCONFIG_RETRY_MS = 60_000;

/** What the rows read. */
export interface DiscoveryReads {
  now(): number;
  /** A key of a Secret in `namespace`; throws with a message naming the Secret and key. */
  readSecret(namespace: string, ref: LocalSecretRef): Promise<string>;
  /** Something woke the cluster since its last pass (reconciler.ts wake()). */
  woken: boolean;
}

export type DiscoveryState = 'Due' | 'NotDue';

export type DiscoveryDecision =
  | Wait
  | { kind: 'probe'; identity: TalosClientIdentity; intervalMs: number }
  | {
      kind: 'record';
      status: TalosClusterStatus;
      event: { type: 'Warning'; reason: string; message: string };
      requeueAfterMs: number;
    };

export type DiscoveryRow = (
  cluster: TalosCluster,
  reads: DiscoveryReads,
) => Promise<DiscoveryDecision>;

/** How often the cluster is probed (spec.discovery.intervalSeconds, default 5 minutes). */
export function intervalOf(cluster: TalosCluster): number {
  return (cluster.spec.discovery?.intervalSeconds ?? 300) * 1000;
}

function dueAt(cluster: TalosCluster): number {
  return (
    Date.parse(cluster.status?.lastDiscoveryTime ?? '') + intervalOf(cluster)
  );
}

export function stateOf(
  cluster: TalosCluster,
  reads: Pick<DiscoveryReads, 'now' | 'woken'>,
): DiscoveryState {
  const specChanged =
    cluster.status?.observedGeneration !== cluster.metadata.generation;
  const due = dueAt(cluster);
  if (reads.woken || specChanged || !Number.isFinite(due)) return 'Due';
  return reads.now() < due ? 'NotDue' : 'Due';
}

/** NotDue: look again when the pass is due. */
const notDue: DiscoveryRow = async (cluster, reads) => ({
  kind: 'wait',
  requeueAfterMs: dueAt(cluster) - reads.now(),
});

/** Due: probe with the cluster's CA, or record why there is none. */
const due: DiscoveryRow = async (cluster, reads) => {
  const intervalMs = intervalOf(cluster);
  try {
    const { identity } = parseTalosconfig(
      await reads.readSecret(
        cluster.metadata.namespace ?? '',
        cluster.spec.talosconfigSecretRef,
      ),
    );
    return { kind: 'probe', identity, intervalMs };
  } catch (error) {
    const requeueAfterMs = Math.min(intervalMs, TALOSCONFIG_RETRY_MS);
    const message = `discovery needs the cluster's talosconfig: ${
      (error as Error).message
    }`;
    const current = cluster.status?.conditions?.find(
      c => c.type === READY_CONDITION,
    );
    if (current?.status === 'False' && current.message === message) {
      return { kind: 'wait', requeueAfterMs };
    }
    return {
      kind: 'record',
      status: {
        ...cluster.status,
        conditions: setCondition(
          cluster.status?.conditions,
          {
            type: READY_CONDITION,
            status: 'False',
            reason: 'TalosconfigUnavailable',
            message,
            observedGeneration: cluster.metadata.generation,
          },
          new Date(reads.now()).toISOString(),
        ),
      },
      event: { type: 'Warning', reason: 'TalosconfigUnavailable', message },
      requeueAfterMs,
    };
  }
};

export const discoveryTable: Record<DiscoveryState, DiscoveryRow> = {
  NotDue: notDue,
  Due: due,
};
