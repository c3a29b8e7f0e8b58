/*
 * The refusals of a decision that carry more than a message: the rung grew since the
 * requester acknowledged (409 with both rungs: the requester must ask again), and an
 * approval that expired (409, audited as `expired`).
 */
import { ConflictError } from '@backstage/errors';
import type {
  CeremonyLevel,
  PreflightCeremonyLevel,
} from '@rackside/plugin-servers-common';
import { AUDIT_OUTCOME } from '../lib/audited';

/** 409: the request's rung now is above the one the requester acknowledged. */
export class ApprovalRungGrewError extends ConflictError {
  get [AUDIT_OUTCOME]() {
    return 'rung-grew';
  }

  constructor(
    readonly requestedRung: PreflightCeremonyLevel,
    readonly rungNow: CeremonyLevel,
  ) {
    super(
      rungNow === 'refused'
        ? `the request would be refused now (it was acknowledged at ${requestedRung}): it cannot be approved; the requester must ask again`
        : `the request is at ${rungNow} now, above the ${requestedRung} its requester acknowledged: it cannot be approved; the requester must ask again`,
    );
  }
}

/** 409: the approval expired before it was given. */
export class ApprovalExpiredError extends ConflictError {
  get [AUDIT_OUTCOME]() {
    return 'expired';
  }
}
