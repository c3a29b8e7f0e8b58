import type { SchedulerServiceTaskScheduleDefinitionConfig } from '@backstage/backend-plugin-api';

export interface Config {
  servers?: {
    /** What the catalog entity provider publishes about each server. */
    catalog?: {
      /**
       * Publish the machine's SMBIOS system UUID on each server entity
       * (annotation `rackside.dev/system-uuid`). Default false: every catalog
       * reader would see it.
       */
      includeSystemUUID?: boolean;
    };
  };
  catalog?: {
    providers?: {
      /**
       * The Rackside server entity provider: each server of each cluster in
       * `servers.clusters` as a Resource (type server), each cluster as a
       * System.
       */
      rackside?: {
        /** Owner of every published entity, e.g. `group:default/plant-admins`. Required. */
        owner: string;
        /**
         * How often the full refresh runs (watch events publish changes in
         * between). Default every 30 minutes, 3 minute timeout.
         */
        schedule?: SchedulerServiceTaskScheduleDefinitionConfig;
      };
    };
  };
}
