import {
  whyNotAbandon,
  whyNotPowerOn,
  whyNotReturnToService,
  type MaintenanceState,
} from './maintenanceRules';
import type { ServerAction } from '../permissions';
import { VIRTUAL_NODE_LABEL, type MaintenanceIntent } from './quorum';

/**
 * Whether an action applies to a node in its present state (docs/architecture.md, "The maintenance lifecycle"): the
 * backend offers an action (its list and detail views) and accepts it (its request
 * check, a 409 otherwise) by this one rule, and the operator's admission refuses the
 * same virtual node and busy node with the same sentences. The guard (quorum) and the
 * capability rule (the power channel) are separate rules, each also written once.
 */

/** Why every action on a virtual node is refused: the one sentence every side uses. */
export function virtualNodeRefusal(nodeName: string): string {
  return `${nodeName} is a virtual node (${VIRTUAL_NODE_LABEL}=true): Rackside takes no action on it.`;
}

/** A node's open maintenance (`openMaintenanceOf`), as these rules read it. */
export interface OpenMaintenanceState extends MaintenanceState {
  name: string;
}

/** Why a new maintenance of a node is not accepted while another is open. */
export function busyNodeRefusal(
  nodeName: string,
  open: OpenMaintenanceState,
): string {
  return `${nodeName} is already under maintenance ${open.name} (${
    open.intent
  }, ${open.phase ?? 'not yet admitted'}); at most one maintenance per node.`;
}

/**
 * The action a new NodeMaintenance asks for: its intent, except that a cordon with
 * `returnToService` already set is how a node cordoned outside Rackside is returned to
 * service (the backend writes one for `uncordon` when the node has no open maintenance).
 */
export function actionOfRequest(spec: {
  intent: MaintenanceIntent;
  returnToService?: unknown;
}): ServerAction {
  return spec.intent === 'cordon' && spec.returnToService
    ? 'uncordon'
    : spec.intent;
}

/** What {@link whyNotApplicable} reads of a node. */
export interface NodeState {
  name: string;
  virtual: boolean;
  /** `spec.unschedulable` of the Node. */
  unschedulable: boolean;
  /** The node's open maintenance, if it has one. */
  open?: OpenMaintenanceState;
}

/**
 * Why an action does not apply to this node now, or undefined when it does:
 * - nothing applies to a virtual node;
 * - cordon, drain, reboot, shutdown, upgrade and firmware start a maintenance: not while
 *   one is open, and cordon not on a node already cordoned (drain may: abandon restores
 *   that cordon);
 * - return to service ends the open maintenance (not once it is already ending, nor
 *   while a reboot is out: that returns by itself), or records the return of a node
 *   cordoned outside Rackside; a node in service has none;
 * - power-on and abandon apply to the open maintenance (maintenanceRules).
 */
export function whyNotApplicable(
  action: ServerAction,
  node: NodeState,
): string | undefined {
  if (node.virtual) return virtualNodeRefusal(node.name);
  const open = node.open;
  switch (action) {
    case 'cordon':
      if (open) return busyNodeRefusal(node.name, open);
      return node.unschedulable
        ? `${node.name} is already cordoned.`
        : undefined;
    case 'drain':
    case 'reboot':
    case 'shutdown':
    case 'upgrade':
    case 'firmware':
      return open ? busyNodeRefusal(node.name, open) : undefined;
    case 'uncordon':
      if (open) return whyNotReturnToService(open.name, node.name, open);
      return node.unschedulable ? undefined : `${node.name} is in service.`;
    case 'power-on':
      return open
        ? whyNotPowerOn(open.name, node.name, open)
        : `${node.name} is not powered off by a Rackside shutdown.`;
    case 'maintenance-abandon':
      return open
        ? whyNotAbandon(open.name, open)
        : `${node.name} has no maintenance.`;
    default:
      return `${String(action)} is not an action.`;
  }
}
