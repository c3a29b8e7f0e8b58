/*
 * What the machine routes ask of the machines feature (docs/architecture.md, "The
 * backend"): discovery addresses and discovered machines, joining a machine, and "Reset
 * and add" requests. Three layers implement it, each wrapping the next
 * (createMachinesService.ts), as the servers and the plans do:
 *
 * - AuditedMachinesService: every call is an auditor event, whatever ends it (reads
 *   `machine-read`, each action its own event);
 * - AuthorizedMachinesService: an unknown cluster's 404 first, then the permission (403
 *   naming it), and hands the cluster it found to the next layer with the call
 *   (`call.grant`);
 * - DefaultMachinesService: every other check and the writes (commands/), within the
 *   grant. It never asks the permission framework, and answers nothing without a grant.
 *
 * The router parses an action request once, into a MachineRequest: the typed command the
 * layers pass down, with what the audit record keeps of what was sent. A request refused
 * before the service sees it (no user, or one that does not parse) is recorded through
 * MachinesEdgeService's `auditRefused`, as the same event.
 */
import type {
  BackstageCredentials,
  LoggerService,
} from '@backstage/backend-plugin-api';
import { InputError } from '@backstage/errors';
import {
  parseTalosconfig,
  type ResolveName,
} from '@rackside/plugin-servers-node';
import {
  addDiscoveryAddressBodySchema,
  confirmReclaimBodySchema,
  createReclaimBodySchema,
  joinMachineBodySchema,
  SMBIOS_UUID_REGEX,
  type CanReclaimResponse,
  type DiscoveryAddressAddedResponse,
  type JoinMachineResponse,
  type MachinesResponse,
  type ReclaimConfirmedResponse,
  type ReclaimCreatedResponse,
  type ReclaimListResponse,
  type ReclaimResponse,
} from '@rackside/plugin-servers-common';
import type { Request } from 'express';
import type { MachinesState } from '../cluster/machinesTypes';
import type { RefusedRequests } from '../lib/audited';
import type { CallVia } from '../lib/auditSeverity';
import type { UserCredentials } from '../lib/credentials';
import type { ReasonPolicy } from '../lib/reasonPolicy';
import { parseRequestBody } from '../lib/requestBody';

/** The machine actions, by the name of their method (and of their command's file). */
export const MACHINE_ACTIONS = [
  'addDiscoveryAddress',
  'joinMachine',
  'createReclaim',
  'confirmReclaim',
] as const;

/** A machine action's name. */
export type MachineAction = (typeof MACHINE_ACTIONS)[number];

/**
 * Where a machine action request points and what it sent, as the route names it
 * (unchecked): what its audit event records, whether the request parses or not.
 */
export interface MachineTarget {
  action: MachineAction;
  /** The route's path parameters: `cluster`, and `uuid` or `name`. */
  path: { cluster: string } & Record<string, string>;
  /**
   * The body as sent. Only the audit record reads it (a few fields, each bounded, never
   * the talosconfig); every layer reads the typed command.
   */
  sent: unknown;
}

/**
 * A machine action request parsed at the edge (the router, with the parsers below):
 * where it points, and its typed command. Every layer reads this; none parses again.
 */
export interface MachineRequest<C> {
  target: MachineTarget;
  command: C;
}

/**
 * The typed commands, one a request (each run by its file in commands/). A `talosCluster`
 * names the TalosCluster meant; unset, the only one in the operator namespace.
 */
export interface AddDiscoveryAddressCommand {
  address: string;
  reason: string;
  talosCluster?: string;
}

export interface JoinMachineCommand {
  /** The machine's SMBIOS UUID, lower-case: its TalosMachine's name. */
  uuid: string;
  reason: string;
}

export interface CreateReclaimCommand {
  address: string;
  /** The foreign cluster's talosconfig, checked to be one; it goes only into the Secret. */
  talosconfig: string;
  reason: string;
  ttlMinutes?: number;
  talosCluster?: string;
}

export interface ConfirmReclaimCommand {
  /** The reclaim request's name. */
  name: string;
  /** The UUID the user typed (any case). */
  uuid: string;
}

/**
 * The parsers of the edge (the router): each reads a request's path and body once into
 * its typed command, or throws the 400 that names what is wrong (never a value of the
 * body: it may carry a credential).
 */
export function parseAddDiscoveryAddressCommand(
  _path: Record<string, string>,
  body: unknown,
): AddDiscoveryAddressCommand {
  return parseRequestBody(addDiscoveryAddressBodySchema, body);
}

/** The machine's UUID from the path (a TalosMachine is named by one), and the body. */
export function parseJoinMachineCommand(
  path: Record<string, string>,
  body: unknown,
): JoinMachineCommand {
  const uuid = path.uuid.toLowerCase();
  if (!SMBIOS_UUID_REGEX.test(uuid)) {
    throw new InputError(
      `uuid: ${path.uuid} is not an SMBIOS UUID (a TalosMachine is named by one)`,
    );
  }
  return { uuid, ...parseRequestBody(joinMachineBodySchema, body) };
}

/**
 * The body, and its talosconfig read as one: a 400 naming the context and field, never
 * the key material.
 */
export function parseCreateReclaimCommand(
  _path: Record<string, string>,
  body: unknown,
): CreateReclaimCommand {
  const command = parseRequestBody(createReclaimBodySchema, body);
  parseTalosconfig(command.talosconfig);
  return command;
}

/** The reclaim request's name from the path, and the typed UUID. */
export function parseConfirmReclaimCommand(
  path: Record<string, string>,
  body: unknown,
): ConfirmReclaimCommand {
  const { uuid } = parseRequestBody(confirmReclaimBodySchema, body);
  return { name: path.name, uuid };
}

/** What an action answers, and the outcome its audit record names. */
export interface MachineActionResult<A> {
  answer: A;
  /** E.g. `created`, `join-requested`. */
  outcome: string;
}

/**
 * What AuthorizedMachinesService decided for a call. The machine permissions are not
 * conditional: a grant exists only for a call the permission allowed, and carries the
 * machine side of the cluster the call names, found once, with its 404.
 */
export interface MachineGrant {
  state: MachinesState;
}

/** How a call came in, what it learns on the way, and what it was granted. */
export interface MachineCallContext {
  /** The audit event's `via`; `http` if unset. */
  via?: CallVia;
  /** The HTTP request, for the audit event. */
  request?: Request;
  /**
   * What the call learns while it runs (e.g. the reclaim's name): set by
   * AuditedMachinesService, whose record keeps it on success and on failure.
   */
  learnt?: Record<string, unknown>;
  /** Set by AuthorizedMachinesService. */
  grant?: MachineGrant;
}

/** What the machine commands need besides the call (no permissions: those are decided above). */
export interface MachineCommandContext {
  logger: LoggerService;
  reasonPolicy: ReasonPolicy;
  /** How discovery resolves a name (tests); DNS if unset. */
  resolveName?: ResolveName;
}

export interface MachinesService {
  /** `GET /clusters/:cluster/machines`: the TalosClusters and the machines discovery found. */
  machines(
    credentials: BackstageCredentials,
    cluster: string,
    call?: MachineCallContext,
  ): Promise<MachinesResponse>;

  /**
   * `GET /clusters/:cluster/reclaims/can`: whether "Reset and add" is offered to this
   * user (`machines:reclaim`) and allowed to Rackside's own identity in the cluster.
   */
  canReclaim(
    credentials: UserCredentials,
    cluster: string,
    call?: MachineCallContext,
  ): Promise<CanReclaimResponse>;

  /** `GET /clusters/:cluster/reclaims`: the reclaim requests, newest first. */
  reclaims(
    credentials: BackstageCredentials,
    cluster: string,
    call?: MachineCallContext,
  ): Promise<ReclaimListResponse>;

  /** `GET /clusters/:cluster/reclaims/:name`: one reclaim request, or 404. */
  reclaim(
    credentials: BackstageCredentials,
    cluster: string,
    name: string,
    call?: MachineCallContext,
  ): Promise<ReclaimResponse>;

  /** `POST /clusters/:cluster/discovery/addresses` (`machines:add`). */
  addDiscoveryAddress(
    credentials: UserCredentials,
    request: MachineRequest<AddDiscoveryAddressCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<DiscoveryAddressAddedResponse>>;

  /** `POST /clusters/:cluster/machines/:uuid/join` (`machines:add`). */
  joinMachine(
    credentials: UserCredentials,
    request: MachineRequest<JoinMachineCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<JoinMachineResponse>>;

  /** `POST /clusters/:cluster/reclaims` (`machines:reclaim`). */
  createReclaim(
    credentials: UserCredentials,
    request: MachineRequest<CreateReclaimCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<ReclaimCreatedResponse>>;

  /** `POST /clusters/:cluster/reclaims/:name/confirm` (`machines:reclaim`). */
  confirmReclaim(
    credentials: UserCredentials,
    request: MachineRequest<ConfirmReclaimCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<ReclaimConfirmedResponse>>;
}

/**
 * What the edge (the router) holds: the service, and the record of an action request
 * refused before it (no user, or a request that does not parse). createMachinesService
 * answers one; the router depends on no layer's class.
 */
export type MachinesEdgeService = MachinesService &
  RefusedRequests<MachineTarget>;
