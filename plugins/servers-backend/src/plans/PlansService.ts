/*
 * What the maintenance plan routes ask of the plans feature (docs/plans.md): the plans
 * of a cluster, the plan pre-flight, and the requests that write a plan. Three layers
 * implement it, each wrapping the next (createPlansService.ts), as the servers feature
 * does (servers/ServersService.ts):
 *
 * - AuditedPlansService: every call is an auditor event, whatever ends it;
 * - AuthorizedPlansService: asks the permission framework and decides (an unknown
 *   cluster's 404 first, `servers:plan`, then the intent's permission on every node),
 *   and hands what it decided to the next layer with the call (`call.grant`);
 * - DefaultPlansService: every other check and the writes (commands/), within what it
 *   was granted. It never asks the permission framework, and answers nothing without a
 *   grant.
 *
 * The router parses a request once, into the typed command the layers pass down
 * (parseCreatePlanCommand, parseControlPlanCommand, parseRenewPlanCommand, and
 * planPreflight.ts's parsePlanPreflightQuery); below it nothing parses it again.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { NotFoundError } from '@backstage/errors';
import {
  PLAN_CONTROLS,
  planControlBodySchema,
  planRenewBodySchema,
  planRequestBodySchema,
  type PlanControl,
  type PlanListQuery,
  type PlanListResponse,
  type PlanPreflightResponse,
  type PlanResponse,
  type PlanCreatedResponse,
  type PlanRenewedResponse,
} from '@rackside/plugin-servers-common';
import type { Request } from 'express';
import type { z } from 'zod';
import type { ClusterState } from '../cluster/types';
import type { RefusedRequests } from '../lib/audited';
import type { CallVia } from '../lib/auditSeverity';
import { parseRequestBody } from '../lib/requestBody';
import type { ReasonPolicy } from '../lib/reasonPolicy';
import type { ServerReadScope } from '../access/serverGrant';
import type { PreflightTokens } from '../preflight/tokens';
import type { UserCredentials } from '../lib/credentials';
import type { PlansConfig } from './config';
import type { ApprovalPolicy } from '../approval/heldApproval';
import type { PlanPreflightQuery } from './planPreflight';
import type { PlanPreflightLimiter } from '../preflight/planPreflightLimiter';
import type { UpgradeSources } from '../lib/upgradeSources';

/** What AuthorizedPlansService decided for a call. */
export interface PlanGrant {
  /** The cluster of the call, as the decorator found it (404 when unknown). */
  cluster: ClusterState;
  /** What `servers:read` lets the caller see. */
  scope: ServerReadScope;
  /** A renewal: the nodes not yet started on which the intent's permission is refused. */
  refused?: string[];
}

/** How a call came in, and what the permission decorator granted it. */
export interface PlanCallContext {
  /** The audit event's `via`; `http` if unset. */
  via?: CallVia;
  /** The HTTP request, for the audit event. */
  request?: Request;
  /** Set by AuthorizedPlansService. */
  grant?: PlanGrant;
}

/** What the plan commands need besides the call. */
export interface PlanCommandContext {
  reasonPolicy: ReasonPolicy;
  preflightTokens: PreflightTokens;
  config: PlansConfig;
  /** The per-user rate of plan pre-flights (a plan request takes one). */
  preflights: PlanPreflightLimiter;
  /** `servers.approvals`: which plans are created (or renewed) held; none if unset. */
  approvals?: ApprovalPolicy;
  /** `servers.upgrades`: what an upgrade or a firmware plan may install; nothing if unset. */
  upgradeSources?: UpgradeSources;
}

/** `POST /clusters/:cluster/plans`, parsed: the body passed its schema. */
export interface CreatePlanCommand {
  cluster: string;
  body: z.output<typeof planRequestBodySchema>;
}

/** `POST /clusters/:cluster/plans/:name/{pause,resume,cancel}`, parsed. */
export interface ControlPlanCommand {
  cluster: string;
  plan: string;
  control: PlanControl;
  body: z.output<typeof planControlBodySchema>;
}

/** `POST /clusters/:cluster/plans/:name/renew`, parsed. */
export interface RenewPlanCommand {
  cluster: string;
  plan: string;
  body: z.output<typeof planRenewBodySchema>;
}

/** A plan request as the route names it (unchecked), for the record of a refused one. */
export interface PlanRequestTarget {
  cluster: string;
  /** `create`, `renew`, or the control of the path. */
  action: string;
  plan?: string;
  body: unknown;
}

/** The control of a path; an unknown one is a 404. */
export function planControlOr404(control: string): PlanControl {
  if (!(PLAN_CONTROLS as readonly string[]).includes(control)) {
    throw new NotFoundError(
      `unknown plan control ${control}; controls are ${PLAN_CONTROLS.join(
        ', ',
      )}`,
    );
  }
  return control as PlanControl;
}

/** A plan creation's body, parsed once at the edge (400 naming the field). */
export function parseCreatePlanCommand(
  cluster: string,
  body: unknown,
): CreatePlanCommand {
  return { cluster, body: parseRequestBody(planRequestBodySchema, body) };
}

/** A pause, resume or cancel: 404 for an unknown control, then the body's 400. */
export function parseControlPlanCommand(
  cluster: string,
  plan: string,
  control: string,
  body: unknown,
): ControlPlanCommand {
  const checked = planControlOr404(control);
  return {
    cluster,
    plan,
    control: checked,
    body: parseRequestBody(planControlBodySchema, body),
  };
}

/** A renewal's body, parsed once at the edge (400 naming the field). */
export function parseRenewPlanCommand(
  cluster: string,
  plan: string,
  body: unknown,
): RenewPlanCommand {
  return { cluster, plan, body: parseRequestBody(planRenewBodySchema, body) };
}

export interface PlansService {
  /** `GET /clusters/:cluster/plans`: the plans the caller may read, newest first, paged. */
  listPlans(
    credentials: BackstageCredentials,
    cluster: string,
    query: PlanListQuery,
    call?: PlanCallContext,
  ): Promise<PlanListResponse>;

  /** `GET /clusters/:cluster/plans/:name`: one plan, 404 if hidden or absent. */
  getPlan(
    credentials: BackstageCredentials,
    cluster: string,
    name: string,
    call?: PlanCallContext,
  ): Promise<PlanResponse>;

  /** `GET /clusters/:cluster/plans/preflight`: what the plan would do now, with its token. */
  planPreflight(
    credentials: UserCredentials,
    cluster: string,
    query: PlanPreflightQuery,
    call?: PlanCallContext,
  ): Promise<PlanPreflightResponse>;

  /** `POST /clusters/:cluster/plans`: every check, then the MaintenancePlan. */
  createPlan(
    credentials: UserCredentials,
    command: CreatePlanCommand,
    call?: PlanCallContext,
  ): Promise<PlanCreatedResponse>;

  /** `POST /clusters/:cluster/plans/:name/{pause,resume,cancel}`. */
  controlPlan(
    credentials: UserCredentials,
    command: ControlPlanCommand,
    call?: PlanCallContext,
  ): Promise<{ name: string }>;

  /** `POST /clusters/:cluster/plans/:name/renew`: a new lease of the plan's authority. */
  renewPlan(
    credentials: UserCredentials,
    command: RenewPlanCommand,
    call?: PlanCallContext,
  ): Promise<PlanRenewedResponse>;
}

/**
 * What the plan router holds: the service, and the record of a plan request refused
 * before it (a body that does not parse, an unknown control). createPlansService
 * answers one; the router depends on no layer's class.
 */
export type PlansEdgeService = PlansService &
  RefusedRequests<PlanRequestTarget>;
