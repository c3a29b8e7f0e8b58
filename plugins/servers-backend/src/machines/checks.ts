/*
 * What the machine actions share (machines/MachinesService.ts calls them): the options,
 * the reason policy, the TalosCluster a request means, the answer of an action, and the
 * retry of a read-modify-write that lost a race.
 */
import type {
  BackstageCredentials,
  BackstageUserPrincipal,
  LoggerService,
} from '@backstage/backend-plugin-api';
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type { TalosCluster } from '@rackside/plugin-servers-common';
import type { ResolveName } from '@rackside/plugin-servers-node';
import type { MachinesRegistry, MachinesState } from '../cluster/machinesTypes';
import { checkReason, type ReasonPolicy } from '../lib/reasonPolicy';

/** What the machine actions need (no permissions: AuthorizedMachinesService decides those). */
export interface MachinesServiceOptions {
  machines: MachinesRegistry;
  logger: LoggerService;
  reasonPolicy: ReasonPolicy;
  /** How discovery resolves a name (tests); DNS if unset. */
  resolveName?: ResolveName;
}

/** 400 when the reason does not pass the deployment's reason policy. */
export function requireReason(ctx: MachinesServiceOptions, reason: string) {
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

/** A machine action: the user, the route's parameters, the raw body, what the audit learns. */
export interface MachineActionRequest {
  credentials: BackstageCredentials<BackstageUserPrincipal>;
  params: Record<string, string>;
  body: unknown;
  extra: Record<string, unknown>;
}

/** What an action answers. */
export interface ActionResult {
  status: number;
  body: unknown;
  /** The audit outcome, e.g. `created`, `join-requested`. */
  outcome: string;
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
