import type { LoggerService } from '@backstage/backend-plugin-api';
import type { PreflightResponse } from '@rackside/plugin-servers-common';
import type { WorkloadCatalog } from '../notifications/workloadCatalog';
import type { PreflightOptions } from './preflight';
import type { UserAccess } from './AuthorizedServersService';
import {
  ServersService,
  type CallContext,
  type ServersServiceOptions,
} from './ServersService';

/**
 * The service whose pre-flight also names the catalog entities the drain disrupts and
 * their owners (`affectedEntities`, docs/architecture.md, "The backend"): the people the backend tells
 * when the drain starts, from the same `workloads` the pre-flight lists. Who owns a
 * workload is not part of the signed impact: it does not change what the drain does.
 */
export class ServersServiceWithOwners extends ServersService {
  constructor(
    options: ServersServiceOptions,
    private readonly owners: {
      workloads: WorkloadCatalog;
      logger: LoggerService;
    },
  ) {
    super(options);
  }

  async preflight(
    access: UserAccess,
    clusterName: string,
    nodeName: string,
    action: string,
    drainOptions: PreflightOptions,
    call?: CallContext,
  ): Promise<PreflightResponse> {
    const answer = await super.preflight(
      access,
      clusterName,
      nodeName,
      action,
      drainOptions,
      call,
    );
    try {
      const affectedEntities = await this.owners.workloads.entitiesOf(
        answer.workloads ?? [],
      );
      return { ...answer, affectedEntities };
    } catch (error) {
      this.owners.logger.warn(
        `pre-flight of ${nodeName}: could not find the owners of its workloads in the catalog: ${error}`,
      );
      return answer;
    }
  }
}
