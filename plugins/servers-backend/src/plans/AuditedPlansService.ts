/*
 * Every call of the plans feature is an auditor event, opened before the permission
 * checks so a denied or unknown target fails its event: reads as `server-read` (low),
 * plan requests as `server-plan` (high) with what the body named, the plan they wrote
 * and how they ended.
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
} from '@rackside/plugin-servers-common';
import { actorOf, audited, auditedRead } from '../lib/audited';
import { PLAN_SEVERITY } from '../lib/auditSeverity';
import type { UserCredentials } from '../lib/credentials';
import type { PlanPreflightQuery } from './planPreflight';
import type { PlanCallContext, PlansService } from './PlansService';

/** A string field of a body not yet checked, or ''. */
function textOf(body: unknown, field: string): string {
  const value = (body as Record<string, unknown> | null | undefined)?.[field];
  return typeof value === 'string' ? value : '';
}

export class AuditedPlansService implements PlansService {
  constructor(
    private readonly inner: PlansService,
    private readonly auditor: AuditorService,
  ) {}

  /** Runs a plan request with its `server-plan` event; a success names the plan. */
  private request<T extends { name: string }>(
    credentials: UserCredentials,
    call: PlanCallContext | undefined,
    meta: Record<string, unknown>,
    run: () => Promise<T>,
  ): Promise<T> {
    return audited(
      {
        auditor: this.auditor,
        eventId: 'server-plan',
        severityLevel: PLAN_SEVERITY,
        request: call?.request,
        meta: {
          actor: credentials.principal.userEntityRef,
          ...meta,
          via: call?.via ?? 'http',
        },
      },
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
    cluster: string,
    body: unknown,
    call?: PlanCallContext,
  ): Promise<{ name: string }> {
    const nodes = (body as Record<string, unknown> | null | undefined)?.nodes;
    return this.request(
      credentials,
      call,
      {
        action: 'create',
        intent: textOf(body, 'intent'),
        reason: textOf(body, 'reason'),
        cluster,
        nodes: Array.isArray(nodes) ? nodes.join(',') : null,
      },
      () => this.inner.createPlan(credentials, cluster, body, call),
    );
  }

  controlPlan(
    credentials: UserCredentials,
    cluster: string,
    name: string,
    control: string,
    body: unknown,
    call?: PlanCallContext,
  ): Promise<{ name: string }> {
    return this.request(
      credentials,
      call,
      { action: control, reason: textOf(body, 'reason'), cluster, plan: name },
      () =>
        this.inner.controlPlan(credentials, cluster, name, control, body, call),
    );
  }

  renewPlan(
    credentials: UserCredentials,
    cluster: string,
    name: string,
    body: unknown,
    call?: PlanCallContext,
  ): Promise<{ name: string; until: string }> {
    return this.request(
      credentials,
      call,
      { action: 'renew', reason: textOf(body, 'reason'), cluster, plan: name },
      () => this.inner.renewPlan(credentials, cluster, name, body, call),
    );
  }
}
