import { virtualNodeRefusal } from './applicability';
import type { ServerAction } from '../permissions';
import type { DerivedQuorum, NodeFacts, QuorumDerivation } from './quorum';
import type { GuardResult } from './types';

/**
 * The quorum guard (docs/architecture.md, "The rules and who calls them", decision 0001 section 5). The backend runs it at request
 * time so a refusal is synchronous; the operator runs it again, authoritatively, before it
 * executes. Both call {@link guard} with a derivation from `deriveQuorum`.
 */

export type { GuardVerdict } from './types';

/** An action on one node, named as in the action route. */
export interface GuardRequest {
  action: ServerAction;
  nodeName: string;
}

export type { GuardResult } from './types';

/** How each action reads at the start of a sentence about a node. */
const ACTION_PHRASES: Record<ServerAction, (node: string) => string> = {
  cordon: node => `Cordoning ${node}`,
  uncordon: node => `Returning ${node} to service`,
  drain: node => `Draining ${node}`,
  reboot: node => `Rebooting ${node}`,
  shutdown: node => `Shutting down ${node}`,
  'power-on': node => `Powering on ${node}`,
  'maintenance-abandon': node => `Abandoning the maintenance of ${node}`,
  upgrade: node => `Upgrading Talos on ${node}`,
  firmware: node => `Updating the firmware of ${node}`,
};

/** "Rebooting cp-1", "Returning cp-1 to service", ... */
export function describeAction(action: ServerAction, nodeName: string): string {
  return ACTION_PHRASES[action](nodeName);
}

/**
 * Whether the action can take a node down. Only the power verbs that stop a machine do,
 * and an upgrade or a firmware update, which end with the reboot that applies them;
 * cordon and drain move workloads, the rest bring a node back or change nothing.
 */
export function takesMemberDown(action: ServerAction): boolean {
  return (
    action === 'reboot' ||
    action === 'shutdown' ||
    action === 'upgrade' ||
    action === 'firmware'
  );
}

function numbers(
  derivation: QuorumDerivation,
  marginAfter?: number,
): Pick<GuardResult, 'members' | 'quorum' | 'margin' | 'marginAfter'> {
  if (!derivation.derived) {
    return { members: null, quorum: null, margin: null, marginAfter: null };
  }
  return {
    members: derivation.members,
    quorum: derivation.quorum,
    margin: derivation.margin,
    marginAfter: marginAfter ?? derivation.margin,
  };
}

function standing(derivation: DerivedQuorum): string {
  return `${derivation.ready} of ${derivation.members} control-plane members ready, quorum needs ${derivation.quorum}`;
}

/** An action that takes no member down never changes the numbers, whatever they are. */
function guardHarmless(
  request: GuardRequest,
  derivation: QuorumDerivation,
  why: string,
): GuardResult {
  const subject = describeAction(request.action, request.nodeName);
  const suffix = derivation.derived ? ` (${standing(derivation)})` : '';
  return {
    verdict: 'allow',
    ...numbers(derivation),
    reason: `${subject} ${why}${suffix}.`,
  };
}

/**
 * Reboot or shutdown of a control-plane member. A member that is NotReady, or already
 * going down under another maintenance, is not counted as ready, so stopping it spends no
 * margin: it is allowed whatever the margin is, because it cannot make things worse than
 * they already are and may be the way back to quorum.
 */
function guardMemberDown(
  request: GuardRequest,
  node: NodeFacts,
  derivation: DerivedQuorum,
): GuardResult {
  const subject = describeAction(request.action, request.nodeName);
  const counted = node.ready && !derivation.goingDown.includes(node.name);
  if (!counted) {
    const state = node.ready ? 'already going down' : 'already NotReady';
    return {
      verdict: 'allow',
      ...numbers(derivation),
      reason: `${subject} takes no ready member down: it is ${state} (${standing(
        derivation,
      )}).`,
    };
  }
  const readyAfter = derivation.ready - 1;
  const marginAfter = readyAfter - derivation.quorum;
  const left = `${readyAfter} of ${derivation.members} control-plane members ready`;
  if (readyAfter < derivation.quorum) {
    return {
      verdict: 'refuse',
      ...numbers(derivation, marginAfter),
      reason: `${subject} would leave ${left}; quorum needs ${derivation.quorum} (margin ${derivation.margin}).`,
    };
  }
  if (marginAfter === 0) {
    return {
      verdict: 'hazard',
      ...numbers(derivation, marginAfter),
      reason: `${subject} would leave ${left}, exactly the quorum of ${derivation.quorum}: it consumes the last of the margin.`,
    };
  }
  return {
    verdict: 'allow',
    ...numbers(derivation, marginAfter),
    reason: `${subject} leaves ${left}; quorum needs ${derivation.quorum} (margin ${derivation.margin} to ${marginAfter}).`,
  };
}

/**
 * The guard verdict for one request.
 *
 * - A node that is not in `nodes` is refused: nothing can be checked about it.
 * - A virtual node refuses every action; enforced here rather than by hiding buttons,
 *   because a hidden button is defeated by a direct API call.
 * - Cordon, uncordon, drain, power-on and abandon take no member down: allowed, with or
 *   without a derivation.
 * - Reboot and shutdown are refused for every node when no quorum is derived (absent
 *   derivation refuses); a worker's are allowed; a member's are refused if they would
 *   drop ready members below quorum and a hazard if they spend the last of the margin.
 */
export function guard(
  request: GuardRequest,
  derivation: QuorumDerivation,
  nodes: readonly NodeFacts[],
): GuardResult {
  const subject = describeAction(request.action, request.nodeName);
  const node = nodes.find(candidate => candidate.name === request.nodeName);
  if (!node) {
    return {
      verdict: 'refuse',
      ...numbers(derivation),
      reason: `${subject} is refused: there is no node named ${request.nodeName} in this cluster.`,
    };
  }
  if (node.virtual) {
    return {
      verdict: 'refuse',
      ...numbers(derivation),
      reason: `${subject} is refused: ${virtualNodeRefusal(node.name)}`,
    };
  }
  if (!takesMemberDown(request.action)) {
    return guardHarmless(
      request,
      derivation,
      'takes no control-plane member down',
    );
  }
  if (!derivation.derived) {
    return {
      verdict: 'refuse',
      ...numbers(derivation),
      reason: `${subject} is refused: the control-plane quorum cannot be derived because ${derivation.reason}.`,
    };
  }
  if (!node.controlPlane) {
    return guardHarmless(
      request,
      derivation,
      'leaves the quorum untouched: it is not a control-plane member',
    );
  }
  return guardMemberDown(request, node, derivation);
}
