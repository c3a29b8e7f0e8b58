/*
 * What the `/api/servers` routes and the registered actions ask of the servers feature:
 * reads from the watch caches, the pre-flight, and action requests. Three layers
 * implement it, each wrapping the next (createServersService.ts):
 *
 * - AuditedServersService: every call is an auditor event, whatever ends it;
 * - AuthorizedServersService: asks the permission framework and decides (404 for an
 *   unknown cluster first, then 403), and hands what it decided to the next layer with
 *   the call (`call.grant`);
 * - DefaultServersService: every other check and the writes, within what it was granted.
 *   It never asks the permission framework, and answers nothing without a grant.
 *
 * The edges parse a request once, into the typed command the layers pass down
 * (parseActionCommand, parsePreflightQuery); below the edge nothing parses it again.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { InputError } from '@backstage/errors';
import {
  actionRequestBodySchema,
  FIRMWARE_BODY_FIELDS,
  UPGRADE_BODY_FIELDS,
  type FirmwareRequest,
  type UpgradeRequest,
  type ActionRequestBody,
  type CeremonyLevel,
  type ClusterListResponse,
  type HealthRefreshResponse,
  type HeldApprovalResponse,
  type MaintenanceListResponse,
  type MaintenanceResponse,
  type PreflightAction,
  type PreflightResponse,
  type ServerAction,
  type ServerListResponse,
  type ServerAlertsResponse,
  type ServerResponse,
  type UpgradeSourcesResponse,
} from '@rackside/plugin-servers-common';
import type { Request } from 'express';
import type { RefusedRequests } from '../lib/audited';
import type { CallVia } from '../lib/auditSeverity';
import type { UserCredentials } from '../lib/credentials';
import type { ServerGrant } from '../access/serverGrant';
import { parseRequestBody } from '../lib/requestBody';
import type { PreflightOptions } from '../preflight/preflight';
import { queryFlag } from '../preflight/preflightHttp';
import { preflightActionOr400, serverActionOr404 } from './actionNames';
import type { ServerListQuery } from './serverList';
import type { PreparedJson } from './ServerListCache';

/** How a call came in, and what the permission decorator granted it. */
export interface CallContext {
  /** The actions registry or a route (the audit event's `via`); `http` if unset. */
  via?: CallVia;
  /** The HTTP request, for the audit event. */
  request?: Request;
  /** Set by AuthorizedServersService: what the caller may read (and do, for lists). */
  grant?: ServerGrant;
}

/** Where an action request points, as the route or the action names it (unchecked). */
export interface ActionTarget {
  cluster: string;
  node: string;
  /** An unknown action is a 404 when the request is parsed. */
  action: string;
  /** The body's reason if it is a text, for the audit record of a refused request. */
  reason?: string;
  /** How the request came in (the audit event's `via`); `http` if unset. */
  via?: CallVia;
  /** Through the actions registry: who called (audited as `principal`). */
  principal?: string;
}

/**
 * An action request parsed at the edge (parseActionCommand): the action is a server
 * action and the body passed its schema. Every layer reads this; none parses again.
 */
export interface ServerActionCommand {
  cluster: string;
  node: string;
  action: ServerAction;
  body: ActionRequestBody;
  /** How the request came in (the audit event's `via`); `http` if unset. */
  via?: CallVia;
  /**
   * Through the actions registry: who called (audited as `principal`), and why a
   * request at this ceremony rung is not the caller's to make (a 403), if it is not.
   */
  agent?: {
    principal: string;
    refusal(level: CeremonyLevel, action: ServerAction): string | undefined;
  };
  /**
   * An upgrade: the Talos upgrade asked (`spec.upgrade`), from the body's image, stage
   * and force. Its `force` is Talos's, so the body's `force` is not a drain option here.
   */
  upgrade?: UpgradeRequest;
  /** A firmware update: the image and components asked (`spec.firmware`). */
  firmware?: FirmwareRequest;
}

/** A server pre-flight asked at the edge (parsePreflightQuery): a known action and options. */
export interface ServerPreflightQuery {
  cluster: string;
  node: string;
  action: PreflightAction;
  options: PreflightOptions;
}

/**
 * The request as the edge received it, parsed once into the command every layer passes
 * down: 404 for an unknown action, then 400 naming the body's first wrong field.
 */
export function parseActionCommand(
  target: ActionTarget,
  body: unknown,
  agent?: ServerActionCommand['agent'],
): ServerActionCommand {
  const action = serverActionOr404(target.action);
  const parsed = parseRequestBody(actionRequestBodySchema, body);
  return {
    cluster: target.cluster,
    node: target.node,
    action,
    ...targetOfAction(action, parsed),
    ...(target.via ? { via: target.via } : {}),
    ...(agent ? { agent } : {}),
  };
}

/** The first of `fields` set in `body`, if any. */
function firstSet(
  body: ActionRequestBody,
  fields: readonly (keyof ActionRequestBody)[],
): string | undefined {
  return fields.find(field => body[field] !== undefined);
}

/**
 * What an upgrade or a firmware update installs, taken out of the body (400 naming the
 * field when it is missing, or set on an action that does not take it). Whether the
 * deployment allows it is the command's check (requestAction.ts), after the permission.
 */
function targetOfAction(
  action: ServerAction,
  body: ActionRequestBody,
): Pick<ServerActionCommand, 'body' | 'upgrade' | 'firmware'> {
  const foreign = firstSet(body, [
    ...(action === 'upgrade' ? [] : UPGRADE_BODY_FIELDS),
    ...(action === 'firmware' ? [] : FIRMWARE_BODY_FIELDS),
  ]);
  if (foreign) {
    const owner = (UPGRADE_BODY_FIELDS as readonly string[]).includes(foreign)
      ? 'an upgrade'
      : 'a firmware update';
    throw new InputError(
      `${foreign} is taken by ${owner} only, not by ${action}`,
    );
  }
  if (action === 'upgrade') {
    const { image, stage, force, ...rest } = body;
    if (!image) throw new InputError('image is required for an upgrade');
    return {
      body: rest,
      upgrade: {
        image,
        ...(stage !== undefined ? { stage } : {}),
        ...(force !== undefined ? { force } : {}),
      },
    };
  }
  if (action === 'firmware') {
    const { imageURI, targets, applyTime, version, checksum, ...rest } = body;
    if (!imageURI) {
      throw new InputError('imageURI is required for a firmware update');
    }
    return {
      body: rest,
      firmware: {
        imageURI,
        ...(targets !== undefined ? { targets } : {}),
        ...(applyTime !== undefined ? { applyTime } : {}),
        ...(version !== undefined ? { version } : {}),
        ...(checksum !== undefined ? { checksum } : {}),
      },
    };
  }
  return { body };
}

/** A pre-flight's query string: 400 for an action without a pre-flight or a bad flag. */
export function parsePreflightQuery(
  cluster: string,
  node: string,
  query: Record<string, unknown>,
): ServerPreflightQuery {
  return {
    cluster,
    node,
    action: preflightActionOr400(String(query.action ?? '')),
    options: {
      deleteEmptyDirData: queryFlag(
        query.deleteEmptyDirData,
        'deleteEmptyDirData',
      ),
      force: queryFlag(query.force, 'force'),
      allowNodeLocalData: queryFlag(
        query.allowNodeLocalData,
        'allowNodeLocalData',
      ),
    },
  };
}

/** What an accepted action request wrote. */
export interface ActionResult {
  /** 201 for a new maintenance, 200 for a flag on the open one. */
  status: number;
  /** The NodeMaintenance. */
  name: string;
  /** What the audit record calls it (`created`, `return-to-service-requested`, ...). */
  outcome: string;
  /** A new maintenance a rule of `servers.approvals.rules` holds (docs/approvals.md). */
  approval?: HeldApprovalResponse;
}

export interface ServersService {
  /**
   * `GET /clusters`: the clusters this user may read, each with the readable servers
   * counted and the quorum only if every member is readable.
   */
  listClusters(
    credentials: BackstageCredentials,
    call?: CallContext,
  ): Promise<ClusterListResponse>;

  /**
   * `GET /upgrades/sources`: what an upgrade or a firmware update may install here
   * (`servers.upgrades`), for the portal to offer targets from. Configuration, not a
   * server's data: any caller who may read servers reads it (403 for one who may read none).
   */
  getUpgradeSources(
    credentials: BackstageCredentials,
    call?: CallContext,
  ): Promise<UpgradeSourcesResponse>;

  /**
   * `GET /clusters/:cluster/servers`, serialised: the whole list, or with `query` one
   * window of it (serverList.ts).
   */
  listServersJson(
    credentials: BackstageCredentials,
    cluster: string,
    query?: ServerListQuery,
    call?: CallContext,
  ): Promise<PreparedJson>;

  /** The whole list, parsed (the actions registry). */
  listServers(
    credentials: BackstageCredentials,
    cluster: string,
    call?: CallContext,
  ): Promise<ServerListResponse>;

  /** One server the caller may read; hidden and absent are the same 404. */
  getServer(
    credentials: BackstageCredentials,
    cluster: string,
    node: string,
    call?: CallContext,
  ): Promise<ServerResponse>;

  /** The Alertmanager alerts of a server the caller may read (docs/alerts.md). */
  getServerAlerts(
    credentials: BackstageCredentials,
    cluster: string,
    node: string,
    call?: CallContext,
  ): Promise<ServerAlertsResponse>;

  /** The maintenances of the servers the caller may read, newest first. */
  listMaintenances(
    credentials: BackstageCredentials,
    cluster: string,
    node?: string,
    call?: CallContext,
  ): Promise<MaintenanceListResponse>;

  /** One maintenance of a server the caller may read. */
  getMaintenance(
    credentials: BackstageCredentials,
    cluster: string,
    name: string,
    call?: CallContext,
  ): Promise<MaintenanceResponse>;

  /** What the action would do to the node now, with the token that binds it for this user. */
  preflight(
    credentials: UserCredentials,
    query: ServerPreflightQuery,
    call?: CallContext,
  ): Promise<PreflightResponse>;

  /**
   * Carries out an action request: every check, then the write. Throws the
   * `@backstage/errors` error of the first check that fails (nothing written).
   */
  requestAction(
    credentials: UserCredentials,
    command: ServerActionCommand,
    call?: CallContext,
  ): Promise<ActionResult>;

  /**
   * Asks the operator for a health reading of one server now (`spec.healthRefresh` on
   * its ServerBMC), at most once a minute a server (429 otherwise).
   */
  requestHealthRefresh(
    credentials: UserCredentials,
    cluster: string,
    node: string,
    call?: CallContext,
  ): Promise<HealthRefreshResponse>;
}

/**
 * What the edges (the router, the registered actions) hold: the service, and the record
 * of an action request refused before it (no user, or a request that does not parse).
 * createServersService answers one; no edge depends on a layer's class.
 */
export type ServersEdgeService = ServersService & RefusedRequests<ActionTarget>;
