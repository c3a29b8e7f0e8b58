/*
 * What each server action writes, once every check passed (ServersService.requestAction):
 * a new NodeMaintenance (cordon, drain, reboot, shutdown; uncordon of a node cordoned
 * outside Rackside) or a request flag on the node's open one (return to service, abandon,
 * power-on). Conflicts with the node's state are 409s with the reason.
 */
import { ConflictError, NotFoundError } from '@backstage/errors';
import {
  abandonWouldStrand,
  RACKSIDE_API_VERSION,
  whyNotAbandon,
  type ServerAction,
} from '@rackside/plugin-servers-common';
import type { NodeObject } from '@rackside/plugin-servers-node';
import { preflightMaintenanceName, type PreflightImpact } from './preflight';
import type { ClusterState, MaintenanceObject } from './types';
import { maintenanceState } from './view';

/** What is kept on the NodeMaintenance of the pre-flight the requester acknowledged. */
function preflightRecord(impact: PreflightImpact, token: string) {
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
  };
}

function maintenanceName(node: string, intent: string): string {
  const stamp = Date.now().toString(36);
  const base = `${node}-${intent}`.slice(0, 253 - stamp.length - 1);
  return `${base}-${stamp}`;
}

export async function performAction(
  cluster: ClusterState,
  action: ServerAction,
  node: NodeObject,
  active: MaintenanceObject | undefined,
  nodeName: string,
  flag: { by: string; reason: string; at: string },
  preflight?: { impact: PreflightImpact; token: string },
): Promise<{ status: number; name: string; outcome: string }> {
  const unschedulable = node.spec?.unschedulable === true;
  const ending = (m: NonNullable<typeof active>) =>
    m.spec.returnToService
      ? 'is already returning to service'
      : 'is already being abandoned';
  switch (action) {
    case 'cordon': {
      if (active) {
        throw new ConflictError(
          `${nodeName} already has a maintenance in progress: ${
            active.metadata.name
          } (${active.spec.intent}, ${active.status?.phase ?? 'Requested'})`,
        );
      }
      if (unschedulable) {
        throw new ConflictError(`${nodeName} is already cordoned`);
      }
      const created = await cluster.createMaintenance({
        apiVersion: RACKSIDE_API_VERSION,
        kind: 'NodeMaintenance',
        metadata: { name: maintenanceName(nodeName, 'cordon') },
        spec: {
          nodeName,
          intent: 'cordon',
          reason: flag.reason,
          requestedBy: flag.by,
        },
      });
      return { status: 201, name: created.metadata.name, outcome: 'created' };
    }
    case 'uncordon': {
      if (active) {
        if (active.spec.returnToService || active.spec.abandon) {
          throw new ConflictError(
            `maintenance ${active.metadata.name} ${ending(active)}`,
          );
        }
        await cluster.setRequestFlag(
          active.metadata.name,
          'returnToService',
          flag,
        );
        return {
          status: 200,
          name: active.metadata.name,
          outcome: 'return-to-service-requested',
        };
      }
      if (!unschedulable) {
        throw new ConflictError(`${nodeName} is in service already`);
      }
      // Cordoned outside Rackside: record the return like any other act.
      const created = await cluster.createMaintenance({
        apiVersion: RACKSIDE_API_VERSION,
        kind: 'NodeMaintenance',
        metadata: { name: maintenanceName(nodeName, 'cordon') },
        spec: {
          nodeName,
          intent: 'cordon',
          reason: flag.reason,
          requestedBy: flag.by,
          returnToService: flag,
        },
      });
      return {
        status: 201,
        name: created.metadata.name,
        outcome: 'created-with-return-to-service',
      };
    }
    case 'drain':
    case 'reboot':
    case 'shutdown': {
      if (active) {
        throw new ConflictError(
          `${nodeName} already has a maintenance in progress: ${
            active.metadata.name
          } (${active.spec.intent}, ${active.status?.phase ?? 'Requested'})`,
        );
      }
      const { impact, token } = preflight!;
      const created = await cluster.createMaintenance({
        apiVersion: RACKSIDE_API_VERSION,
        kind: 'NodeMaintenance',
        // Named after the token: a second request with it cannot create another.
        metadata: { name: preflightMaintenanceName(nodeName, action, token) },
        spec: {
          nodeName,
          intent: action,
          reason: flag.reason,
          requestedBy: flag.by,
          preflight: preflightRecord(impact, token),
          drain: {
            deleteEmptyDirData: impact.options.deleteEmptyDirData,
            force: impact.options.force,
            // Recorded on the maintenance: the operator refuses node-local data without it.
            allowNodeLocalData: impact.options.allowNodeLocalData === true,
          },
        },
      });
      return { status: 201, name: created.metadata.name, outcome: 'created' };
    }
    case 'maintenance-abandon': {
      if (!active) {
        throw new ConflictError(`${nodeName} has no maintenance to abandon`);
      }
      if (active.spec.returnToService || active.spec.abandon) {
        throw new ConflictError(
          `maintenance ${active.metadata.name} ${ending(active)}`,
        );
      }
      // The offer rule of servers-common: never while the machine is off.
      const notOffered = whyNotAbandon(
        active.metadata.name,
        maintenanceState(active),
      );
      if (notOffered) throw new ConflictError(notOffered);
      await cluster.setRequestFlag(active.metadata.name, 'abandon', flag);
      return {
        status: 200,
        name: active.metadata.name,
        outcome: 'abandon-requested',
      };
    }
    case 'power-on': {
      if (
        !active ||
        active.spec.intent !== 'shutdown' ||
        active.status?.phase !== 'PoweredOff'
      ) {
        throw new ConflictError(
          `${nodeName} is not powered off by a Rackside shutdown${
            active
              ? ` (maintenance ${active.metadata.name} is ${
                  active.spec.intent
                }, ${active.status?.phase ?? 'Requested'})`
              : ''
          }`,
        );
      }
      // An abandon written with kubectl while the machine is off is held until power-on
      // (servers-common abandonWouldStrand): power-on is the way back, so it stays open.
      const heldAbandon =
        !!active.spec.abandon && abandonWouldStrand(maintenanceState(active));
      if (
        active.spec.returnToService ||
        (active.spec.abandon && !heldAbandon)
      ) {
        throw new ConflictError(
          `maintenance ${active.metadata.name} ${ending(active)}`,
        );
      }
      if (active.spec.powerOn) {
        throw new ConflictError(
          `power-on of ${nodeName} was already requested by ${active.spec.powerOn.by}`,
        );
      }
      await cluster.setRequestFlag(active.metadata.name, 'powerOn', flag);
      return {
        status: 200,
        name: active.metadata.name,
        outcome: 'power-on-requested',
      };
    }
    default:
      throw new NotFoundError(`unknown action ${String(action)}`);
  }
}
