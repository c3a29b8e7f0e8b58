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
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import type {
  PlanListQuery,
  PlanListResponse,
  PlanPreflightResponse,
  PlanResponse,
} from '@rackside/plugin-servers-common';
import type { Request } from 'express';
import type { ClusterRegistry } from '../cluster/types';
import type { CallVia } from '../lib/auditSeverity';
import type { ReasonPolicy } from '../lib/reasonPolicy';
import type { ServerReadScope } from '../access/serverGrant';
import type { PreflightTokens } from '../preflight/tokens';
import type { UserCredentials } from '../lib/credentials';
import type { PlansConfig } from './config';
import type { PlanPreflightQuery } from './planPreflight';
import type { PlanPreflightLimiter } from './preflightLimiter';

/** What AuthorizedPlansService decided for a call. */
export interface PlanGrant {
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
  clusters: ClusterRegistry;
  reasonPolicy: ReasonPolicy;
  preflightTokens: PreflightTokens;
  config: PlansConfig;
  /** The per-user rate of plan pre-flights (a plan request takes one). */
  preflights: PlanPreflightLimiter;
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
    cluster: string,
    body: unknown,
    call?: PlanCallContext,
  ): Promise<{ name: string }>;

  /** `POST /clusters/:cluster/plans/:name/{pause,resume,cancel}`. */
  controlPlan(
    credentials: UserCredentials,
    cluster: string,
    name: string,
    control: string,
    body: unknown,
    call?: PlanCallContext,
  ): Promise<{ name: string }>;

  /** `POST /clusters/:cluster/plans/:name/renew`: a new lease of the plan's authority. */
  renewPlan(
    credentials: UserCredentials,
    cluster: string,
    name: string,
    body: unknown,
    call?: PlanCallContext,
  ): Promise<{ name: string; until: string }>;
}
