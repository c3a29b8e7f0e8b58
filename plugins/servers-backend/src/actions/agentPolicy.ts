/*
 * What a request through the actions registry (an MCP client, an agent) may not do on
 * its own: the ceremony ladder's top rungs ask a person to type the node's name, and an
 * agent can type anything. Hazard-rung requests (the last quorum margin) are refused
 * unless `servers.actions.allowHazard` is set; typed-name rung requests (reboot,
 * shutdown) unless `servers.actions.allowPowerVerbs` is set. Both default to false: a
 * person does these in the portal.
 */
import type { RootConfigService } from '@backstage/backend-plugin-api';
import type {
  BackstageCredentials,
  BackstageUserPrincipal,
} from '@backstage/backend-plugin-api';
import type {
  CeremonyLevel,
  ServerAction,
} from '@rackside/plugin-servers-common';

/** `servers.actions` of app-config. */
export interface AgentPolicy {
  /** Hazard-rung requests (the last quorum margin) through the registry. Default false. */
  allowHazard: boolean;
  /** Typed-name rung requests (reboot, shutdown) through the registry. Default false. */
  allowPowerVerbs: boolean;
}

/** Nothing above the pre-flight rung: the default. */
export const DEFAULT_AGENT_POLICY: AgentPolicy = {
  allowHazard: false,
  allowPowerVerbs: false,
};

/** Reads `servers.actions` (both flags optional, false when unset). */
export function readAgentPolicy(config: RootConfigService): AgentPolicy {
  return {
    allowHazard:
      config.getOptionalBoolean('servers.actions.allowHazard') ?? false,
    allowPowerVerbs:
      config.getOptionalBoolean('servers.actions.allowPowerVerbs') ?? false,
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
    return `${action} of ${node} needs the node's name typed by a person: do it in the portal. Requests through the actions registry (MCP) may reboot or shut down only where servers.actions.allowPowerVerbs is true.`;
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
