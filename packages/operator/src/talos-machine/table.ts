/*
 * Adding a discovered machine (docs/architecture.md, "Adding machines") as a table, one row per TalosMachine phase:
 *
 *   Pending  -> Joining  spec.join set: the machine at status.address still answers in
 *                        maintenance mode with this UUID, and the cluster's join config is
 *                        applied over that connection (ApplyConfiguration, mode AUTO)
 *            -> Joined   a Ready Node already carries this system UUID
 *            -> Failed   the machine refused the config
 *   Joining  -> Joined   a Ready Node carries this system UUID (the node watch wakes it)
 *            -> Failed   none within the join timeout of the config being applied
 *
 * Before anything is sent, the address must be one discovery may reach (servers-node reachFor: inside
 * the cluster's allowed networks, a name resolved now and every address inside); the
 * join goes to the address that was checked. Messages carry categories; error texts go
 * to the log.
 *
 * A config with no clear answer counts as applied (the Node decides), so it is never
 * applied twice; a machine that has taken the config no longer answers in maintenance
 * mode, so a pass after a crash cannot apply it again either.
 */
import {
  isNodeReady,
  type LocalSecretRef,
  type TalosCluster,
  type TalosMachine,
  type TalosMachinePhase,
  type TalosMachineStatus,
} from '@rackside/plugin-servers-common';
import {
  reachFor,
  talosFailureOutcome,
  type ResolveName,
} from '@rackside/plugin-servers-node';
import { JoinReason } from '../runtime/lifecycle/reasons';
import {
  finished,
  isoOf,
  NEW,
  phaseOf,
  type Clock,
  type Done,
  type Wait,
} from '../runtime/lifecycle/table';
import type { NodeView } from '../runtime/nodeView';
import type { TalosAccess } from '../talos/talosAccess';

export interface JoinLimits {
  /** From the config applied to Failed without a Ready Node. */
  joinTimeoutMs: number;
  /** The longest wait between two looks while something is not there yet. */
  retryMs: number;
  callTimeoutMs: number;
}

export const DEFAULT_JOIN_LIMITS: JoinLimits = {
  joinTimeoutMs: 15 * 60_000,
  retryMs: 10_000,
  callTimeoutMs: 10_000,
};

export interface JoinPorts extends Clock {
  cluster(namespace: string, name: string): TalosCluster | undefined;
  /** The Node whose status.nodeInfo.systemUUID is `uuid` (any case). */
  nodeWithUUID(uuid: string): NodeView | undefined;
  readSecret(namespace: string, ref: LocalSecretRef): Promise<string>;
  talos: TalosAccess;
  /** Resolves an address that is a name, at the time of the join. */
  resolve: ResolveName;
  limits: JoinLimits;
  log?: (message: string) => void;
}

export type JoinDecision =
  | {
      kind: 'transition';
      to: TalosMachinePhase;
      message: string;
      status?: Partial<TalosMachineStatus>;
      event: { type: 'Normal' | 'Warning'; reason: string };
    }
  /** Nothing to do until something changes; `message` is shown in status.message. */
  | (Wait & { message?: string })
  | Done;

export type JoinRow = (
  tm: TalosMachine,
  ports: JoinPorts,
) => Promise<JoinDecision>;

function joined(
  tm: TalosMachine,
  node: NodeView,
  ports: JoinPorts,
): JoinDecision {
  const nodeName = node.metadata?.name ?? '';
  return {
    kind: 'transition',
    to: 'Joined',
    message: `Node ${nodeName} with system UUID ${tm.metadata.name} is Ready`,
    status: { nodeName, joinedAt: isoOf(ports) },
    event: { type: 'Normal', reason: JoinReason.Joined },
  };
}

const readyNode = (tm: TalosMachine, ports: JoinPorts) => {
  const node = ports.nodeWithUUID(tm.metadata.name);
  return isNodeReady(node) ? node : undefined;
};

/** Pending (or no phase yet): apply the join config once spec.join asks for it. */
const pending: JoinRow = async (tm, ports) => {
  const node = readyNode(tm, ports);
  if (node) return joined(tm, node, ports);
  if (!tm.spec.join) return { kind: 'wait' };
  const address = tm.status?.address;
  const uuid = tm.metadata.name;
  const namespace = tm.metadata.namespace ?? '';
  const retry = ports.limits.retryMs;
  if (!address) {
    return {
      kind: 'wait',
      message: 'no address known yet: discovery has not seen this machine',
      requeueAfterMs: retry,
    };
  }
  const cluster = ports.cluster(namespace, tm.spec.cluster);
  if (!cluster) {
    return {
      kind: 'wait',
      message: `TalosCluster ${tm.spec.cluster} not found`,
      requeueAfterMs: retry,
    };
  }
  const log = (message: string) =>
    ports.log?.(`TalosMachine ${namespace}/${uuid}: ${message}`);
  const reach = await reachFor(cluster, address, ports.resolve);
  if (!reach.allowed) {
    log(
      `join: ${address} not contacted: ${reach.message}${
        reach.detail ? ` (${reach.detail})` : ''
      }`,
    );
    return {
      kind: 'wait',
      message: `${address} is not contacted: ${reach.message}`,
      requeueAfterMs: retry,
    };
  }
  const dial = reach.dial;
  let config: string;
  try {
    config = await ports.readSecret(
      namespace,
      cluster.spec.joinConfigSecretRef,
    );
  } catch (error) {
    return {
      kind: 'wait',
      message: `the join config cannot be read: ${(error as Error).message}`,
      requeueAfterMs: retry,
    };
  }
  let found: string;
  try {
    found = (
      await ports.talos.maintenanceUUID(dial, ports.limits.callTimeoutMs)
    ).toLowerCase();
  } catch (error) {
    log(`join: ${address} UUID read failed: ${(error as Error).message}`);
    return {
      kind: 'wait',
      message: `${address} does not answer in maintenance mode`,
      requeueAfterMs: retry,
    };
  }
  if (found !== uuid) {
    return {
      kind: 'wait',
      message: `a machine with UUID ${found} answers at ${address}, not this one: waiting for discovery to find ${uuid} again`,
      requeueAfterMs: retry,
    };
  }
  const requested = `Join requested by ${tm.spec.join.by}: ${tm.spec.join.reason}`;
  try {
    const applied = await ports.talos.applyConfiguration(
      dial,
      config,
      ports.limits.callTimeoutMs,
    );
    return {
      kind: 'transition',
      to: 'Joining',
      message: `${requested}. The join config of ${
        cluster.metadata.name
      } was applied at ${address} (mode ${applied.mode}${
        applied.modeDetails ? `: ${applied.modeDetails}` : ''
      }); waiting for a Ready Node with system UUID ${uuid}`,
      status: { configAppliedAt: isoOf(ports) },
      event: { type: 'Normal', reason: JoinReason.ConfigApplied },
    };
  } catch (error) {
    const outcome = talosFailureOutcome(error);
    log(`join: ApplyConfiguration at ${address}: ${(error as Error).message}`);
    if (outcome === 'notSent') {
      return {
        kind: 'wait',
        message: `the join config could not be sent to ${address} (no connection)`,
        requeueAfterMs: retry,
      };
    }
    if (outcome === 'refused') {
      return {
        kind: 'transition',
        to: 'Failed',
        message: `${address} refused the join config of ${cluster.metadata.name} (the operator's log has its answer)`,
        event: { type: 'Warning', reason: JoinReason.JoinFailed },
      };
    }
    return {
      kind: 'transition',
      to: 'Joining',
      message: `${requested}. The join config got no clear answer from ${address}; it is not sent again: waiting for a Ready Node with system UUID ${uuid}`,
      status: { configAppliedAt: isoOf(ports) },
      event: { type: 'Warning', reason: JoinReason.ConfigUnanswered },
    };
  }
};

/** Joining: a Ready Node with the UUID, or Failed at the join timeout. */
const joining: JoinRow = async (tm, ports) => {
  const node = readyNode(tm, ports);
  if (node) return joined(tm, node, ports);
  const applied = Date.parse(tm.status?.configAppliedAt ?? '');
  const deadline =
    (Number.isFinite(applied) ? applied : ports.now()) +
    ports.limits.joinTimeoutMs;
  const left = deadline - ports.now();
  if (left <= 0) {
    return {
      kind: 'transition',
      to: 'Failed',
      message: `no Ready Node with system UUID ${
        tm.metadata.name
      } appeared within ${Math.round(
        ports.limits.joinTimeoutMs / 1000,
      )} s of the join config being applied`,
      event: { type: 'Warning', reason: JoinReason.JoinFailed },
    };
  }
  const registered = ports.nodeWithUUID(tm.metadata.name);
  return {
    kind: 'wait',
    message: registered
      ? `Node ${registered.metadata?.name} registered; waiting for it to be Ready`
      : undefined,
    requeueAfterMs: left,
  };
};

export const joinTransitions: Record<TalosMachinePhase | typeof NEW, JoinRow> =
  {
    [NEW]: pending,
    Pending: pending,
    Joining: joining,
    Joined: finished,
    Failed: finished,
  };

export function joinRowFor(tm: TalosMachine): JoinRow {
  return joinTransitions[phaseOf(tm)];
}
