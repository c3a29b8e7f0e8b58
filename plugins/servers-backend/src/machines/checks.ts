/*
 * The checks the machine commands share (commands/): the reason policy, the
 * TalosCluster a request means, and the retry of a read-modify-write that lost a race.
 */
import { ConflictError, InputError, NotFoundError } from '@backstage/errors';
import type { TalosCluster } from '@rackside/plugin-servers-common';
import type { MachinesState } from '../cluster/machinesTypes';
import { checkReason } from '../lib/reasonPolicy';
import type { MachineCommandContext } from './MachinesService';

/** 400 when the reason does not pass the deployment's reason policy. */
export function requireReason(ctx: MachineCommandContext, reason: string) {
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
