/*
 * What a request through the actions registry (an MCP client, an agent) may not do on
 * its own: the ceremony ladder's top rungs ask a person to type the node's name, and an
 * agent can type anything. Hazard-rung requests (the last quorum margin) are refused
 * unless `servers.actions.allowHazard` is set; typed-name rung requests (reboot,
 * shutdown, upgrade, firmware) unless `servers.actions.allowPowerVerbs` is set; the drain options that lose
 * data (`force`, `deleteEmptyDirData`) unless `servers.actions.allowDataLossDrain` is set.
 * All default to false: a person does these in the portal.
 */
import type { RootConfigService } from '@backstage/backend-plugin-api';
import type {
  BackstageCredentials,
  BackstageUserPrincipal,
} from '@backstage/backend-plugin-api';
import {
  DATA_LOSS_DRAIN_OPTIONS,
  type CeremonyLevel,
  type ServerAction,
} from '@rackside/plugin-servers-common';

/** `servers.actions` of app-config. */
export interface AgentPolicy {
  /** Hazard-rung requests (the last quorum margin) through the registry. Default false. */
  allowHazard: boolean;
  /** Typed-name rung requests (reboot, shutdown) through the registry. Default false. */
  allowPowerVerbs: boolean;
  /**
   * The drain options that lose data (`force`, `deleteEmptyDirData`) through the
   * registry. Default false: the actions do not offer them and refuse a call with them.
   */
  allowDataLossDrain: boolean;
}

/** Nothing above the pre-flight rung: the default. */
export const DEFAULT_AGENT_POLICY: AgentPolicy = {
  allowHazard: false,
  allowPowerVerbs: false,
  allowDataLossDrain: false,
};

/**
 * The drain options an agent gets only with `allowDataLossDrain`: force deletes pods no
 * controller recreates, deleteEmptyDirData their scratch data; both are gone for good.
 * (allowNodeLocalData leaves the data on the node: `servers:drain-data` guards it.)
 */
export const AGENT_DATA_LOSS_OPTIONS: readonly string[] =
  DATA_LOSS_DRAIN_OPTIONS.filter(option => option !== 'allowNodeLocalData');

/** The registry fields an action offers under this policy (the data-loss ones dropped). */
export function agentFields<F extends string>(
  policy: AgentPolicy,
  fields: readonly F[],
): F[] {
  if (policy.allowDataLossDrain) return [...fields];
  return fields.filter(f => !AGENT_DATA_LOSS_OPTIONS.includes(f));
}

/**
 * Why an agent may not ask these drain options, or undefined when it may: a call that
 * sets one the policy does not open is refused, never quietly taken without it.
 */
export function agentDrainRefusal(
  policy: AgentPolicy,
  input: Record<string, unknown>,
  action: string,
  node: string,
): string | undefined {
  if (policy.allowDataLossDrain) return undefined;
  const asked = AGENT_DATA_LOSS_OPTIONS.filter(
    o => input[o] !== undefined && input[o] !== false,
  );
  if (asked.length === 0) return undefined;
  return `${action} of ${node} with ${asked.join(' and ')} ${
    asked.length === 1 ? 'loses' : 'lose'
  } data: a person must do it in the portal. Requests through the actions registry (MCP) may use ${asked.join(
    ' or ',
  )} only where servers.actions.allowDataLossDrain is true.`;
}

/** Reads `servers.actions` (every flag optional, false when unset). */
export function readAgentPolicy(config: RootConfigService): AgentPolicy {
  return {
    allowHazard:
      config.getOptionalBoolean('servers.actions.allowHazard') ?? false,
    allowPowerVerbs:
      config.getOptionalBoolean('servers.actions.allowPowerVerbs') ?? false,
    allowDataLossDrain:
      config.getOptionalBoolean('servers.actions.allowDataLossDrain') ?? false,
  };
}

/**
 * Why an agent may not make this request at this rung, or undefined when it may. The
 * hazard rung needs both flags: a hazard is a power verb at the last margin.
 */
export function agentRefusal(
  policy: AgentPolicy,
  level: CeremonyLevel,
  action: ServerAction,
  node: string,
): string | undefined {
  if (level === 'hazard' && !(policy.allowHazard && policy.allowPowerVerbs)) {
    return `${action} of ${node} consumes the last quorum margin (hazard): a person must do it in the portal, where the node's name is typed by hand. Requests through the actions registry (MCP) stop below the hazard rung (servers.actions.allowHazard is off).`;
  }
  if (level === 'typed-name' && !policy.allowPowerVerbs) {
    return `${action} of ${node} needs the node's name typed by a person: do it in the portal. Requests through the actions registry (MCP) may reboot, shut down, upgrade or update firmware only where servers.actions.allowPowerVerbs is true.`;
  }
  return undefined;
}

/**
 * Who made a registry call, for the audit: the user, and the service that carries the
 * call for them when the token says so (an MCP server acting on behalf of a user).
 */
export function agentPrincipal(
  credentials: BackstageCredentials<BackstageUserPrincipal>,
): string {
  const { userEntityRef, actor } = credentials.principal;
  return actor?.subject
    ? `${userEntityRef} via ${actor.subject}`
    : userEntityRef;
}
