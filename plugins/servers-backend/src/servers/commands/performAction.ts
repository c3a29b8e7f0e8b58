/*
 * What each server action writes, once every check passed (ServersService.requestAction):
 * a new NodeMaintenance (cordon, drain, reboot, shutdown, upgrade, firmware; uncordon of a node cordoned
 * outside Rackside) or a request flag on the node's open one (return to service, abandon,
 * power-on). An action that does not apply to the node's state (servers-common
 * `whyNotApplicable`, the rule the views offer by) is a 409 with the reason.
 */
import { ConflictError, NotFoundError } from '@backstage/errors';
import {
  nodeFactsFromNode,
  RACKSIDE_API_VERSION,
  whyNotApplicable,
  type Approval,
  type FirmwareRequest,
  type ServerAction,
  type HealthyReturnBody,
  type UpgradeRequest,
} from '@rackside/plugin-servers-common';
import type { NodeObject } from '@rackside/plugin-servers-node';
import {
  preflightMaintenanceName,
  usedTokenMessage,
} from '../../preflight/tokens';
import {
  preflightRecord,
  type PreflightImpact,
} from '../../preflight/preflight';
import type { ClusterState, MaintenanceObject } from '../../cluster/types';
import { nodeStateOf } from '../view';

/** The maintenance named after a pre-flight token exists: the token was used. */
export class PreflightTokenUsedError extends ConflictError {
  constructor(readonly maintenance: string) {
    super(usedTokenMessage(maintenance));
  }
}

function maintenanceName(node: string, intent: string): string {
  const stamp = Date.now().toString(36);
  const base = `${node}-${intent}`.slice(0, 253 - stamp.length - 1);
  return `${base}-${stamp}`;
}

/** What one accepted action request writes, checked by requestAction.ts. */
export interface PerformActionCommand {
  action: ServerAction;
  /** The node as the caller may see it. */
  node: NodeObject;
  /** Its open maintenance, if any. */
  active?: MaintenanceObject;
  /** Who asked, why and when: the requester of a new maintenance, or the flag set. */
  flag: { by: string; reason: string; at: string };
  /** A drain, reboot or shutdown: the pre-flight acknowledged and its token. */
  preflight?: { impact: PreflightImpact; token: string };
  /** Opt-in: Complete only after a healthy return (docs/alerts.md); written into the spec. */
  healthyReturn?: HealthyReturnBody;
  /**
   * A rule holds the new maintenance (docs/approvals.md): written into the spec of the
   * one it creates, so the operator touches nothing until it is approved.
   */
  approval?: Approval;
  /** An upgrade: the Talos upgrade asked, written as `spec.upgrade`. */
  upgrade?: UpgradeRequest;
  /** A firmware update: the image and components asked, written as `spec.firmware`. */
  firmware?: FirmwareRequest;
}

export async function performAction(
  cluster: ClusterState,
  command: PerformActionCommand,
): Promise<{ status: number; name: string; outcome: string }> {
  const {
    action,
    node,
    active,
    flag,
    preflight,
    healthyReturn,
    approval,
    upgrade,
    firmware,
  } = command;
  const facts = nodeFactsFromNode(node);
  const nodeName = facts.name;
  const conflict = whyNotApplicable(action, nodeStateOf(node, facts, active));
  if (conflict) throw new ConflictError(conflict);
  /** A cordon maintenance (with returnToService: the return of a node cordoned outside). */
  const asked = {
    ...(healthyReturn ? { healthyReturn } : {}),
    ...(approval ? { approval } : {}),
  };
  const createCordon = (extra: { returnToService?: typeof flag } = {}) =>
    cluster.createMaintenance({
      apiVersion: RACKSIDE_API_VERSION,
      kind: 'NodeMaintenance',
      metadata: { name: maintenanceName(nodeName, 'cordon') },
      spec: {
        nodeName,
        intent: 'cordon',
        reason: flag.reason,
        requestedBy: flag.by,
        ...asked,
        ...extra,
      },
    });
  switch (action) {
    case 'cordon': {
      const created = await createCordon();
      return { status: 201, name: created.metadata.name, outcome: 'created' };
    }
    case 'uncordon': {
      if (active) {
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
      // Cordoned outside Rackside: record the return like any other act.
      const created = await createCordon({ returnToService: flag });
      return {
        status: 201,
        name: created.metadata.name,
        outcome: 'created-with-return-to-service',
      };
    }
    case 'drain':
    case 'reboot':
    case 'shutdown':
    case 'upgrade':
    case 'firmware': {
      const { impact, token } = preflight!;
      // Named after the token: a second request with it cannot create another.
      const name = preflightMaintenanceName(nodeName, action, token);
      const created = await cluster
        .createMaintenance({
          apiVersion: RACKSIDE_API_VERSION,
          kind: 'NodeMaintenance',
          metadata: { name },
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
            // What is installed, as parsed and allowed by the command.
            ...(action === 'upgrade' ? { upgrade } : {}),
            ...(action === 'firmware' ? { firmware } : {}),
            ...asked,
          },
        })
        .catch(error => {
          // Another request (or replica) created it first: the token is used.
          if (ConflictError.is(error)) throw new PreflightTokenUsedError(name);
          throw error;
        });
      return { status: 201, name: created.metadata.name, outcome: 'created' };
    }
    case 'maintenance-abandon': {
      // whyNotApplicable: there is one, not ending, and never while the machine is off.
      await cluster.setRequestFlag(active!.metadata.name, 'abandon', flag);
      return {
        status: 200,
        name: active!.metadata.name,
        outcome: 'abandon-requested',
      };
    }
    case 'power-on': {
      // whyNotApplicable: a PoweredOff shutdown not yet asked to power on or return; an
      // abandon written with kubectl while the machine is off is held, so power-on stays.
      await cluster.setRequestFlag(active!.metadata.name, 'powerOn', flag);
      return {
        status: 200,
        name: active!.metadata.name,
        outcome: 'power-on-requested',
      };
    }
    default:
      throw new NotFoundError(`unknown action ${String(action)}`);
  }
}
