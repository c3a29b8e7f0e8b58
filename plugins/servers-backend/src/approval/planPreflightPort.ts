/*
 * The plan pre-flight as the approvals feature takes it for an approver (docs/approvals.md),
 * as a port: the plans feature computes and checks plan pre-flights
 * (plans/planApprovalPreflight.ts implements this), plugin.ts hands it over, and the
 * approvals feature never imports the plans feature.
 */
import type { PlanPreflightResponse } from '@rackside/plugin-servers-common';
import type { ServerReadScope } from '../access/serverGrant';
import type {
  ClusterSnapshot,
  ClusterState,
  PlanObject,
} from '../cluster/types';

export interface PlanPreflightPort {
  /**
   * The plan pre-flight of the plan's steps not yet started (with its drain options and
   * parallelism), now, its token issued to `user`.
   */
  now(
    cluster: ClusterState,
    snap: ClusterSnapshot,
    scope: ServerReadScope,
    plan: PlanObject,
    user: string,
  ): Promise<PlanPreflightResponse>;
  /**
   * Checks that `token` acknowledges `current` for `user`, as a creation's (400 for a
   * token that is not theirs, 409 with the new pre-flight when it changed or is stale or
   * blocked) and that each hazard step's name is in `typedNames` (400).
   */
  verify(
    current: PlanPreflightResponse,
    user: string,
    token: string,
    typedNames: readonly string[],
  ): { takenAt: string };
}
