import type { BasicPermission } from '@backstage/plugin-permission-common';
import { usePermission } from '@backstage/plugin-permission-react';

/** What the permission framework says about one basic permission. */
export type PermissionDecision = 'loading' | 'allow' | 'deny';

/**
 * @deprecated Call `usePermission` from `@backstage/plugin-permission-react`
 * (as `AddNodePage`, `ClusterMachines` and `PlanPage` do); this adapter goes
 * once its last caller has moved. When asking fails the answer is `allow`: the
 * backend checks every request anyway and its 403 says what is missing.
 */
export function usePermissionDecision(
  permission: BasicPermission,
): PermissionDecision {
  const { loading, allowed, error } = usePermission({ permission });
  if (loading) return 'loading';
  return allowed || error !== undefined ? 'allow' : 'deny';
}
