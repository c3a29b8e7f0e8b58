/*
 * The approvals feature as the routes use it: the audit around the permission checks
 * around the service (ApprovalsService.ts names the layers).
 */
import type { AuditorService } from '@backstage/backend-plugin-api';
import type { ServerPermissions } from '../access/serverPermissions';
import type { ClusterRegistry } from '../cluster/types';
import { AuditedApprovalsService } from './AuditedApprovalsService';
import { AuthorizedApprovalsService } from './AuthorizedApprovalsService';
import type {
  ApprovalCommandContext,
  ApprovalsEdgeService,
} from './ApprovalsService';
import { DefaultApprovalsService } from './DefaultApprovalsService';

/** What {@link createApprovalsService} needs. */
export type ApprovalsServiceOptions = ApprovalCommandContext & {
  clusters: ClusterRegistry;
  auditor: AuditorService;
  /** The servers' permission questions (`servers:read`, `servers:approve`). */
  serverPermissions: ServerPermissions;
};

export function createApprovalsService(
  options: ApprovalsServiceOptions,
): ApprovalsEdgeService {
  return new AuditedApprovalsService(
    new AuthorizedApprovalsService(
      new DefaultApprovalsService({
        preflightTokens: options.preflightTokens,
        planPreflights: options.planPreflights,
        userInfo: options.userInfo,
        notifier: options.notifier,
        now: options.now,
      }),
      options.serverPermissions,
      options.clusters,
    ),
    options.auditor,
  );
}
