/*
 * The servers feature as the routes and the actions registry use it: the audit around
 * the permission checks around the service (ServersService.ts names the layers).
 */
import type { AuditorService } from '@backstage/backend-plugin-api';
import { AuditedServersService } from './AuditedServersService';
import { AuthorizedServersService } from './AuthorizedServersService';
import {
  DefaultServersService,
  type DefaultServersServiceOptions,
} from './DefaultServersService';
import type { ServersEdgeService } from './ServersService';
import {
  ServerPermissions,
  type ServerPermissionOptions,
} from '../access/serverPermissions';

/** What {@link createServersService} needs. */
export type ServersServiceOptions = DefaultServersServiceOptions &
  ServerPermissionOptions & {
    auditor: AuditorService;
    /** The permission questions, when the plans share them; made here otherwise. */
    serverPermissions?: ServerPermissions;
  };

export function createServersService(
  options: ServersServiceOptions,
): ServersEdgeService {
  const permissions =
    options.serverPermissions ?? new ServerPermissions(options);
  return new AuditedServersService(
    new AuthorizedServersService(
      new DefaultServersService(options),
      permissions,
      options.clusters,
    ),
    options.auditor,
  );
}
