import { createPermissionRule } from '@backstage/plugin-permission-node';
import { z } from 'zod';
import { serverPermissionResourceRef } from '../serverResource';

/** Matches servers of the named clusters (names from servers.clusters). */
export const isInCluster = createPermissionRule({
  name: 'IS_IN_CLUSTER',
  description: 'Allow servers of the given clusters',
  resourceRef: serverPermissionResourceRef,
  paramsSchema: z.object({
    clusters: z
      .array(z.string())
      .describe('Cluster names from servers.clusters'),
  }),
  apply: (server, { clusters }) => clusters.includes(server.cluster),
  toQuery:
    ({ clusters }) =>
    server =>
      clusters.includes(server.cluster),
});
