/*
 * The machines feature as the routes use it: the audit around the permission checks
 * around the service (MachinesService.ts names the layers).
 */
import type {
  AuditorService,
  LoggerService,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import type { ResolveName } from '@rackside/plugin-servers-node';
import type { MachinesRegistry } from '../cluster/machinesTypes';
import type { ReasonPolicy } from '../lib/reasonPolicy';
import { AuditedMachinesService } from './AuditedMachinesService';
import { AuthorizedMachinesService } from './AuthorizedMachinesService';
import { DefaultMachinesService } from './DefaultMachinesService';
import type { MachinesEdgeService } from './MachinesService';

/** What {@link createMachinesService} needs. */
export interface MachinesServiceOptions {
  /** The machine side of every configured cluster. */
  machines: MachinesRegistry;
  permissions: PermissionsService;
  auditor: AuditorService;
  logger: LoggerService;
  reasonPolicy: ReasonPolicy;
  /** How discovery resolves a name (tests); DNS if unset. */
  resolveName?: ResolveName;
}

export function createMachinesService(
  options: MachinesServiceOptions,
): MachinesEdgeService {
  return new AuditedMachinesService(
    new AuthorizedMachinesService(
      new DefaultMachinesService({
        logger: options.logger,
        reasonPolicy: options.reasonPolicy,
        resolveName: options.resolveName,
      }),
      options.permissions,
      options.machines,
    ),
    options.auditor,
  );
}
