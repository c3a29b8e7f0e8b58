/*
 * Every call of the plans feature is an auditor event, opened before the permission
 * checks so a denied or unknown target fails its event: reads as `server-read` (low),
 * plan requests as `server-plan` (high) with what the body named, the plan they wrote
 * and how they ended. A plan request the router refused (a body that does not parse, an
 * unknown control) is recorded too, as the same event (auditRefused).
 */
import type {
  AuditorService,
  BackstageCredentials,
} from '@backstage/backend-plugin-api';
import type {
  PlanListQuery,
  PlanListResponse,
  PlanPreflightResponse,
  PlanResponse,
  PlanCreatedResponse,
  PlanRenewedResponse,
} from '@rackside/plugin-servers-common';
import {
  actorOf,
  audited,
  auditedRead,
  auditRefused,
  type Refusal,
} from '../lib/audited';
import { PLAN_SEVERITY } from '../lib/auditSeverity';
import type { UserCredentials } from '../lib/credentials';
import type { PlanPreflightQuery } from './planPreflight';
import type {
  ControlPlanCommand,
  CreatePlanCommand,
  PlanCallContext,
  PlanRequestTarget,
  PlansEdgeService,
  PlansService,
  RenewPlanCommand,
} from './PlansService';

/** A string field of a body not yet checked, or ''. */
function textOf(body: unknown, field: string): string {
  const value = (body as Record<string, unknown> | null | undefined)?.[field];
  return typeof value === 'string' ? value : '';
}

export class AuditedPlansService implements PlansEdgeService {
  constructor(
    private readonly inner: PlansService,
    private readonly auditor: AuditorService,
  ) {}

  /** What a `server-plan` event says of a request, refused at the edge or not. */
  private planEvent(
    target: PlanRequestTarget,
    actor: string | null,
    call: PlanCallContext | undefined,
  ) {
    const { cluster, action, plan, body } = target;
    const nodes = (body as Record<string, unknown> | null | undefined)?.nodes;
    return {
      auditor: this.auditor,
      eventId: 'server-plan',
      severityLevel: PLAN_SEVERITY,
      request: call?.request,
      meta: {
        actor,
        action,
        ...(action === 'create' ? { intent: textOf(body, 'intent') } : {}),
        reason: textOf(body, 'reason'),
        cluster,
        ...(plan === undefined
          ? { nodes: Array.isArray(nodes) ? nodes.join(',') : null }
          : { plan }),
        via: call?.via ?? 'http',
      },
    };
  }

  /** Runs a plan request with its `server-plan` event; a success names the plan. */
  private request<T extends { name: string }>(
    credentials: UserCredentials,
    call: PlanCallContext | undefined,
    target: PlanRequestTarget,
    run: () => Promise<T>,
  ): Promise<T> {
    return audited(
      this.planEvent(target, credentials.principal.userEntityRef, call),
      async record => {
        const result = await run();
        record.extra.plan = result.name;
        record.outcome = 'ok';
        return result;
      },
    );
  }

  listPlans(
    credentials: BackstageCredentials,
    cluster: string,
    query: PlanListQuery,
    call?: PlanCallContext,
  ): Promise<PlanListResponse> {
    return auditedRead(
      this.auditor,
      actorOf(credentials),
      call,
      {
        read: 'plans',
        cluster,
        ...(query.state ? { state: query.state } : {}),
      },
      () => this.inner.listPlans(credentials, cluster, query, call),
    );
  }

  getPlan(
    credentials: BackstageCredentials,
    cluster: string,
    name: string,
    call?: PlanCallContext,
  ): Promise<PlanResponse> {
    return auditedRead(
      this.auditor,
      actorOf(credentials),
      call,
      { read: 'plan', cluster, plan: name },
      () => this.inner.getPlan(credentials, cluster, name, call),
    );
  }

  planPreflight(
    credentials: UserCredentials,
    cluster: string,
    query: PlanPreflightQuery,
    call?: PlanCallContext,
  ): Promise<PlanPreflightResponse> {
    return auditedRead(
      this.auditor,
      actorOf(credentials),
      call,
      {
        read: 'plan-preflight',
        cluster,
        intent: query.intent,
        nodes: query.nodes.join(','),
      },
      () => this.inner.planPreflight(credentials, cluster, query, call),
    );
  }

  createPlan(
    credentials: UserCredentials,
    command: CreatePlanCommand,
    call?: PlanCallContext,
  ): Promise<PlanCreatedResponse> {
    return this.request(
      credentials,
      call,
      { cluster: command.cluster, action: 'create', body: command.body },
      () => this.inner.createPlan(credentials, command, call),
    );
  }

  controlPlan(
    credentials: UserCredentials,
    command: ControlPlanCommand,
    call?: PlanCallContext,
  ): Promise<{ name: string }> {
    return this.request(
      credentials,
      call,
      {
        cluster: command.cluster,
        action: command.control,
        plan: command.plan,
        body: command.body,
      },
      () => this.inner.controlPlan(credentials, command, call),
    );
  }

  renewPlan(
    credentials: UserCredentials,
    command: RenewPlanCommand,
    call?: PlanCallContext,
  ): Promise<PlanRenewedResponse> {
    return this.request(
      credentials,
      call,
      {
        cluster: command.cluster,
        action: 'renew',
        plan: command.plan,
        body: command.body,
      },
      () => this.inner.renewPlan(credentials, command, call),
    );
  }

  /**
   * Records a plan request the router refused before this service saw it (a body that
   * does not parse, an unknown control), as the `server-plan` event it would have been.
   */
  auditRefused(
    target: PlanRequestTarget,
    error: Error,
    refusal: Refusal,
  ): Promise<void> {
    return auditRefused(
      this.planEvent(target, refusal.actor, { request: refusal.request }),
      error,
    );
  }
}
