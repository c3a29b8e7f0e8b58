/*
 * The plans feature as the routes use it: the audit around the permission checks
 * around the service (PlansService.ts names the layers).
 */
import type { AuditorService } from '@backstage/backend-plugin-api';
import type { ClusterRegistry } from '../cluster/types';
import type { ReasonPolicy } from '../lib/reasonPolicy';
import type { PreflightTokens } from '../preflight/tokens';
import type { ServerPermissions } from '../access/serverPermissions';
import type { ApprovalPolicy } from '../approval/heldApproval';
import { AuditedPlansService } from './AuditedPlansService';
import { AuthorizedPlansService } from './AuthorizedPlansService';
import { DEFAULT_PLANS_CONFIG, type PlansConfig } from './config';
import { DefaultPlansService } from './DefaultPlansService';
import type { PlansEdgeService } from './PlansService';
import { PlanPreflightLimiter } from '../preflight/planPreflightLimiter';
import type { UpgradeSources } from '../lib/upgradeSources';

/** What {@link createPlansService} needs. */
export interface PlansServiceOptions {
  clusters: ClusterRegistry;
  auditor: AuditorService;
  reasonPolicy: ReasonPolicy;
  preflightTokens: PreflightTokens;
  /** The servers' permission questions (the plans' read scope is `servers:read`). */
  serverPermissions: ServerPermissions;
  /** `servers.plans` in app-config; its defaults otherwise. */
  config?: PlansConfig;
  /** `servers.approvals`: which plans are created (or renewed) held; none if unset. */
  approvals?: ApprovalPolicy;
  /**
   * The per-user plan pre-flight limit, shared with the approvals' plan views; one from
   * `config` if unset.
   */
  preflights?: PlanPreflightLimiter;
  /** `servers.upgrades`: what an upgrade or a firmware plan may install; nothing if unset. */
  upgradeSources?: UpgradeSources;
}

export function createPlansService(
  options: PlansServiceOptions,
): PlansEdgeService {
  const config = options.config ?? DEFAULT_PLANS_CONFIG;
  return new AuditedPlansService(
    new AuthorizedPlansService(
      new DefaultPlansService({
        reasonPolicy: options.reasonPolicy,
        preflightTokens: options.preflightTokens,
        config,
        preflights:
          options.preflights ??
          new PlanPreflightLimiter(config.preflightsPerMinute),
        approvals: options.approvals,
        upgradeSources: options.upgradeSources,
      }),
      options.serverPermissions,
      options.clusters,
    ),
    options.auditor,
  );
}
