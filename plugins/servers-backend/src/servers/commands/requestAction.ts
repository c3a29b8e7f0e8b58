/*
 * `POST /clusters/:cluster/servers/:node/actions/:action` (and the registered actions):
 * the checks of one action request after its permissions were decided, in order (the
 * reason policy, the server as the caller may see it, the guard, the capability rule,
 * the agent's rungs, the ceremony, the pre-flight token against a fresh pre-flight),
 * then the write (performAction.ts). Throws the error of the first check that fails,
 * having written nothing. The command was parsed at the edge and the cluster found by
 * the decorator (the grant's): nothing is parsed or looked up again here.
 */
import { ConflictError, InputError, NotAllowedError } from '@backstage/errors';
import {
  ceremonyFor,
  checkCeremony,
  guard,
  hardwareHealthRaise,
  isPowerVerb,
  nodeFactsFromNode,
  firmwareAlreadyAt,
  talosVersionOfImage,
  talosVersionOfOsImage,
  whyForceRefused,
  type GuardResult,
  type PreflightAction,
  type PreflightCeremonyLevel,
  type ServerAction,
} from '@rackside/plugin-servers-common';
import type { NodeObject } from '@rackside/plugin-servers-node';
import { AUDIT_OUTCOME } from '../../lib/audited';
import { checkReason, type ReasonPolicy } from '../../lib/reasonPolicy';
import type { ClusterSnapshot, ClusterState } from '../../cluster/types';
import type { ClusterGrant } from '../../access/serverGrant';
import { isPreflightAction } from '../actionNames';
import { currentImpact } from '../../preflight/impact';
import {
  PreflightConflictError,
  type PreflightImpact,
} from '../../preflight/preflight';
import {
  preflightMaintenanceName,
  usedTokenMessage,
  type PreflightTokens,
} from '../../preflight/tokens';
import type { ActionResult, ServerActionCommand } from '../ServersService';
import {
  clusterSnapshot,
  installCheck,
  powerCheck,
} from '../../cluster/snapshot';
import { visibleNode } from '../../access/visibleNodes';
import { performAction, PreflightTokenUsedError } from './performAction';
import {
  checkInstallSource,
  NO_UPGRADE_SOURCES,
  type UpgradeSources,
} from '../../lib/upgradeSources';
import {
  approvalNodeOf,
  heldApprovalFor,
  heldApprovalResponse,
  NO_APPROVALS,
  type ApprovalPolicy,
} from '../../approval/heldApproval';

/** A guard refusal: 409 with the quorum numbers in the error body. */
export class QuorumRefusedError extends ConflictError {
  /** Audited as `refused`, not `conflict`. */
  get [AUDIT_OUTCOME]() {
    return 'refused';
  }

  readonly members: number | null;
  readonly quorum: number | null;
  readonly margin: number | null;
  readonly marginAfter: number | null;
  readonly reason: string;

  constructor(result: GuardResult) {
    super(result.reason);
    this.members = result.members;
    this.quorum = result.quorum;
    this.margin = result.margin;
    this.marginAfter = result.marginAfter;
    this.reason = result.reason;
  }
}

/** What an action request needs besides the request. */
export interface RequestActionContext {
  reasonPolicy: ReasonPolicy;
  preflightTokens: PreflightTokens;
  /** `servers.approvals`: which new maintenances are created held; none if unset. */
  approvals?: ApprovalPolicy;
  /** `servers.upgrades`: what an upgrade or a firmware update may install; nothing if unset. */
  upgradeSources?: UpgradeSources;
}

/** The actions whose request creates a NodeMaintenance of that intent, which a rule may hold. */
const HOLDABLE_ACTIONS: ReadonlySet<ServerAction> = new Set<ServerAction>([
  'cordon',
  'drain',
  'reboot',
  'shutdown',
  'upgrade',
  'firmware',
]);

/** One request on its way through the checks. */
interface Checked {
  command: ServerActionCommand;
  cluster: ClusterState;
  snap: ClusterSnapshot;
  node: NodeObject;
  grant: ClusterGrant;
  actor: string;
}

export async function requestAction(
  ctx: RequestActionContext,
  actor: string,
  command: ServerActionCommand,
  grant: ClusterGrant,
): Promise<ActionResult> {
  const { action, body } = command;
  const { cluster } = grant;
  const reasonProblem = checkReason(ctx.reasonPolicy, body.reason);
  if (reasonProblem) throw new InputError(reasonProblem);
  checkInstallSource(ctx.upgradeSources ?? NO_UPGRADE_SOURCES, command);
  const snap = await clusterSnapshot(cluster);
  // A server the caller may not read is absent to them: no 409 below may name its
  // state or its maintenance.
  const node = visibleNode(
    snap,
    cluster.name,
    command.node,
    grant.scope.filter,
  );
  const checked: Checked = { command, cluster, snap, node, grant, actor };
  const level = checkGuardAndCeremony(checked);
  checkNotAlreadyThere(checked);
  const preflight = isPreflightAction(action)
    ? await checkPreflightToken(ctx.preflightTokens, checked, action)
    : undefined;
  // A rule of servers.approvals.rules may hold the new maintenance (docs/approvals.md):
  // with the rung the requester acknowledged, decided before the one create.
  const policy = ctx.approvals ?? NO_APPROVALS;
  const approval = HOLDABLE_ACTIONS.has(action)
    ? heldApprovalFor(policy, {
        action,
        intent: action,
        // A refused pre-flight threw above: its rung is one a request passes.
        rung:
          (preflight?.acknowledged.ceremony.level as
            | PreflightCeremonyLevel
            | undefined) ?? level,
        nodes: [approvalNodeOf(node)],
      })
    : undefined;
  let result: ActionResult;
  try {
    result = await performAction(cluster, {
      action,
      node,
      active: snap.activeByNode.get(command.node),
      flag: {
        by: actor,
        reason: body.reason.trim(),
        at: new Date().toISOString(),
      },
      preflight: preflight && {
        impact: preflight.acknowledged,
        token: body.preflightToken ?? '',
      },
      healthyReturn: body.healthyReturn,
      approval,
      ...(command.upgrade ? { upgrade: command.upgrade } : {}),
      ...(command.firmware ? { firmware: command.firmware } : {}),
    });
  } catch (error) {
    if (error instanceof PreflightTokenUsedError) {
      const shown = shownWith(ctx.preflightTokens, checked, preflight?.current);
      throw shown(usedTokenMessage(error.maintenance));
    }
    throw error;
  }
  if (approval && result.status === 201) {
    await policy.notifier.held(
      {
        cluster: cluster.name,
        kind: 'maintenance',
        name: result.name,
        intent: action,
        nodes: [command.node],
        requestedBy: actor,
        reason: body.reason.trim(),
      },
      approval,
    );
    return { ...result, approval: heldApprovalResponse(approval) };
  }
  return result;
}

/**
 * The guard, the capability rule, the agent's rungs and the ceremony the rung asks;
 * answers the rung.
 */
function checkGuardAndCeremony(checked: Checked): PreflightCeremonyLevel {
  const { command, cluster, snap, node, grant } = checked;
  const { action, body } = command;
  const nodeName = command.node;
  const verdict = guard({ action, nodeName }, snap.derivation, snap.facts);
  if (verdict.verdict === 'refuse') {
    throw new QuorumRefusedError(
      grant.scope.guardOf(cluster.name, snap, verdict, action, nodeName),
    );
  }
  if (isPowerVerb(action)) {
    // The capability rule: a verb the channel does not offer here is refused.
    const allowed = powerCheck(snap, action, nodeFactsFromNode(node));
    if (!allowed.ok) throw new ConflictError(allowed.reason);
  }
  // The capability rule of an upgrade (the talos channel) or a firmware update (a BMC
  // over Redfish): a request no channel here can carry out is a 400, nothing written.
  const cannot = whyChannelCannot(checked);
  if (cannot) throw new InputError(cannot);
  // Returning a server whose BMC reports Critical, or whose reading is too old or failed,
  // asks for the typed name (hardwareHealth.ts).
  const ceremony = ceremonyFor(
    action,
    verdict.verdict,
    hardwareHealthRaise(action, snap.bmcHealth.get(nodeName), Date.now()),
  );
  // An agent stops below the rungs that ask a person to type the node's name.
  const agentRefused = command.agent?.refusal(ceremony.level, action);
  if (agentRefused) throw new NotAllowedError(agentRefused);
  const problems = checkCeremony(ceremony, {
    reason: body.reason,
    preflightToken: body.preflightToken,
    typedName: body.typedName,
    nodeName,
  });
  if (problems.length) {
    throw new InputError(`ceremony not met: ${problems.join(' ')}`);
  }
  // Talos's force skips its own etcd check: only a request at the hazard rung may.
  const forceRefused =
    command.upgrade && whyForceRefused(command.upgrade, ceremony.level);
  if (forceRefused) throw new InputError(forceRefused);
  // A refused verdict threw above: the rung is one a request can pass.
  return ceremony.level as PreflightCeremonyLevel;
}

/** Why the node's channel cannot carry out this upgrade or firmware update, if it cannot. */
function whyChannelCannot(checked: Checked): string | undefined {
  const { command, snap, node } = checked;
  if (command.action !== 'upgrade' && command.action !== 'firmware') {
    return undefined;
  }
  const answer = installCheck(snap, command.action, nodeFactsFromNode(node));
  return answer.ok ? undefined : answer.reason;
}

/**
 * An upgrade to the version the node already runs (its osImage names it) is a 409: there
 * is nothing to do, and the operator would refuse it the same way.
 */
function checkNotAlreadyThere(checked: Checked) {
  const { command, node, snap } = checked;
  if (command.firmware) {
    // A firmware update to the version the BMC's last reading reports for the targets
    // (servers-common firmwareAlreadyAt, the rule the operator applies too).
    const already = firmwareAlreadyAt(
      command.firmware.version,
      snap.bmcHealth.get(command.node)?.firmware,
      command.firmware.targets,
    );
    if (already) {
      throw new ConflictError(
        `firmware update of ${command.node} refused: ${already}`,
      );
    }
  }
  if (!command.upgrade) return;
  const target = talosVersionOfImage(command.upgrade.image);
  const running = talosVersionOfOsImage(node.status?.nodeInfo?.osImage);
  if (target && running === target) {
    throw new ConflictError(
      `upgrade of ${command.node} refused: already at ${target}`,
    );
  }
}

/**
 * The token against a fresh pre-flight: 400 for a token that is not this caller's, 409
 * with the new pre-flight if what the action would do changed, or if the token was used
 * (its maintenance, named after it, exists). Answers the impact now and as
 * acknowledged (the same, as of when the caller saw it).
 */
async function checkPreflightToken(
  tokens: PreflightTokens,
  checked: Checked,
  action: PreflightAction,
): Promise<{ current: PreflightImpact; acknowledged: PreflightImpact }> {
  const { cluster, snap, node, actor } = checked;
  const { body } = checked.command;
  const nodeName = node.metadata?.name ?? '';
  const impact = await currentImpact(cluster, snap, nodeName, action, {
    deleteEmptyDirData: body.deleteEmptyDirData === true,
    force: body.force === true,
    allowNodeLocalData: body.allowNodeLocalData === true,
  });
  const shown = shownWith(tokens, checked, impact);
  let takenAt: string;
  try {
    ({ takenAt } = tokens.verify(
      body.preflightToken ?? '',
      impact,
      actor,
      new Date(),
    ));
  } catch (error) {
    if (error instanceof PreflightConflictError) throw shown(error.message);
    throw error;
  }
  const once = preflightMaintenanceName(
    nodeName,
    action,
    body.preflightToken ?? '',
  );
  if (snap.maintenances.some(m => m.metadata.name === once)) {
    throw shown(usedTokenMessage(once));
  }
  // Same impact as acknowledged: record it as of when the user saw it.
  const acknowledged = { ...impact, takenAt };
  if (!acknowledged.canProceed) {
    throw shownWith(
      tokens,
      checked,
      acknowledged,
    )(acknowledged.blockers.join(' '));
  }
  return { current: impact, acknowledged };
}

/**
 * A 409 carrying a new pre-flight of `impact` for this caller, shown as the pre-flight
 * route shows it (the read scope applied), so the dialog can show it at once.
 */
function shownWith(
  tokens: PreflightTokens,
  checked: Checked,
  impact: PreflightImpact | undefined,
) {
  return (message: string): Error =>
    impact
      ? new PreflightConflictError(
          message,
          checked.grant.scope.preflightOf(
            checked.snap,
            tokens.sign(impact, checked.actor),
          ),
        )
      : new ConflictError(message);
}
