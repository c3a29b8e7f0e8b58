import type {
  AuditorService,
  AuditorServiceCreateEventOptions,
  BackstageCredentials,
  BackstageUserPrincipal,
  HttpAuthService,
  LoggerService,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import {
  ConflictError,
  InputError,
  NotAllowedError,
  NotFoundError,
} from '@backstage/errors';
import {
  AuthorizeResult,
  type BasicPermission,
} from '@backstage/plugin-permission-common';
import type { TalosCluster } from '@rackside/plugin-servers-common';
import type { Request, Response } from 'express';
import { audited, auditUnauthenticated } from '../lib/audited';
import type { ReasonPolicy } from '../service/reasonPolicy';
import { checkReason } from '../service/reasonPolicy';
import type { MachinesRegistry, MachinesState } from '../service/machinesTypes';

/** What every machine route needs. */
export interface MachinesRouteContext {
  machines: MachinesRegistry;
  httpAuth: HttpAuthService;
  permissions: PermissionsService;
  auditor: AuditorService;
  logger: LoggerService;
  reasonPolicy: ReasonPolicy;
}

/** The machine state of `:cluster`, or 404. */
export function machinesOr404(
  ctx: MachinesRouteContext,
  cluster: string,
): MachinesState {
  const state = ctx.machines.get(cluster);
  if (!state) throw new NotFoundError(`no cluster named ${cluster}`);
  return state;
}

/** Whether the permission framework allows `permission` for these credentials. */
export async function isAllowed(
  ctx: MachinesRouteContext,
  credentials: BackstageCredentials,
  permission: BasicPermission,
): Promise<boolean> {
  const [decision] = await ctx.permissions.authorize([{ permission }], {
    credentials,
  });
  return decision.result === AuthorizeResult.ALLOW;
}

/** 403 naming the permission unless it is allowed. */
export async function requirePermission(
  ctx: MachinesRouteContext,
  credentials: BackstageCredentials,
  permission: BasicPermission,
  what: string,
): Promise<void> {
  if (!(await isAllowed(ctx, credentials, permission))) {
    throw new NotAllowedError(
      `you are not allowed to ${what} (${permission.name})`,
    );
  }
}

/** 400 when the reason does not pass the deployment's reason policy. */
export function requireReason(ctx: MachinesRouteContext, reason: string) {
  const problem = checkReason(ctx.reasonPolicy, reason);
  if (problem) throw new InputError(problem);
}

/**
 * The TalosCluster a request means: the one named, or the only one in the
 * operator namespace. 404 when there is none (or not that one), 400 when there
 * are several and the request names none.
 */
export async function targetTalosCluster(
  state: MachinesState,
  named: string | undefined,
): Promise<TalosCluster> {
  const all = await state.talosClusters();
  if (named !== undefined) {
    const found = all.find(c => c.metadata.name === named);
    if (!found) {
      throw new NotFoundError(
        `no TalosCluster named ${named} in namespace ${state.namespace} of cluster ${state.cluster}`,
      );
    }
    return found;
  }
  if (all.length === 0) {
    throw new NotFoundError(
      `cluster ${state.cluster} has no TalosCluster in namespace ${state.namespace}: machines cannot be added to it until one is created`,
    );
  }
  if (all.length > 1) {
    throw new InputError(
      `invalid request body: talosCluster: cluster ${
        state.cluster
      } has several TalosClusters (${all
        .map(c => c.metadata.name)
        .sort()
        .join(', ')}): name one`,
    );
  }
  return all[0];
}

/** What an audited action answers. */
export interface ActionResult {
  status: number;
  body: unknown;
  /** e.g. `created`, `join-requested`. */
  outcome: string;
}

/** How an action is recorded by the auditor. */
export interface AuditedActionOptions {
  eventId: string;
  severityLevel: NonNullable<AuditorServiceCreateEventOptions['severityLevel']>;
  /**
   * What is known before any check (never a credential: the auditor writes it
   * to the log). The actor and the outcome are added.
   */
  meta: Record<string, unknown>;
}

/**
 * Runs one mutating machine action as a user and records every attempt, allowed or
 * not, as an auditor event (also attempts without a user). `extra` collects what
 * the handler learns on the way (e.g. the reclaim's name) for the event.
 */
export async function runAudited(
  ctx: MachinesRouteContext,
  req: Request,
  res: Response,
  options: AuditedActionOptions,
  handler: (
    credentials: BackstageCredentials<BackstageUserPrincipal>,
    extra: Record<string, unknown>,
  ) => Promise<ActionResult>,
): Promise<void> {
  const audit = {
    auditor: ctx.auditor,
    eventId: options.eventId,
    severityLevel: options.severityLevel,
    request: req,
  };
  let credentials: BackstageCredentials<BackstageUserPrincipal>;
  try {
    credentials = await ctx.httpAuth.credentials(req, { allow: ['user'] });
  } catch (error) {
    await auditUnauthenticated(
      { ...audit, meta: options.meta },
      error as Error,
    );
    throw error;
  }
  const result = await audited(
    {
      ...audit,
      meta: { actor: credentials.principal.userEntityRef, ...options.meta },
    },
    async record => {
      const answer = await handler(credentials, record.extra);
      record.outcome = answer.outcome;
      return answer;
    },
  );
  res.status(result.status).json(result.body);
}

/**
 * Runs a read-modify-write up to three times: a ConflictError means the object
 * moved (the operator writes status), so `attempt` reads it again and re-checks.
 */
export async function withConflictRetry<T>(
  attempt: () => Promise<T>,
): Promise<T> {
  for (let n = 0; ; n++) {
    try {
      return await attempt();
    } catch (error) {
      if (n >= 2 || !ConflictError.is(error) || isOwnConflict(error)) {
        throw error;
      }
    }
  }
}

/** A conflict the handler raised itself (a state check), not a lost race. */
export class StateConflictError extends ConflictError {}

function isOwnConflict(error: unknown): boolean {
  return error instanceof StateConflictError;
}

/** A string field of a raw body for the audit record, or null when it is not one. */
export function rawString(body: unknown, field: string, max = 1024) {
  const value = (body as Record<string, unknown> | undefined)?.[field];
  return typeof value === 'string' ? value.slice(0, max) : null;
}
