export interface Config {
  permission?: {
    /**
     * The Rackside app-config permission policy, read when
     * `@rackside/plugin-permission-backend-module-servers` is installed.
     * Validated at start-up: an unknown key, permission, rule or tier stops
     * the backend with the key named.
     */
    rackside?: {
      /**
       * Users and groups (entity refs) holding each tier. Each tier holds
       * the ones below it: admin holds operate-lead holds read. By default
       * `servers:read` and `machines:read` need read, every other Rackside
       * permission needs admin (decision 0001 section 6).
       */
      tiers?: {
        read?: string[];
        'operate-lead'?: string[];
        admin?: string[];
      };
      /**
       * Allow and deny lines per user or group. A deny line wins over any
       * tier and any allow line. A line is a permission name, or
       * `{ permission, conditions }` where conditions use the server rules
       * (IS_CONTROL_PLANE, IS_VIRTUAL, HAS_LABEL, IS_IN_CLUSTER) with
       * `rule`/`params`, `allOf`, `anyOf` and `not`.
       */
      principals?: Array<{
        /** `user:default/ada` or `group:default/plant-engineers`. */
        ref: string;
        allow?: Array<string | { permission: string; conditions?: object }>;
        deny?: Array<string | { permission: string; conditions?: object }>;
      }>;
      /**
       * The answer for permissions that are not Rackside's (catalog,
       * scaffolder, ...). Default `deny`.
       */
      otherPermissions?: 'allow' | 'deny';
      /**
       * Seconds a user's group memberships (read from the catalog) are
       * reused. Default 30.
       */
      groupCacheSeconds?: number;
    };
  };
}
