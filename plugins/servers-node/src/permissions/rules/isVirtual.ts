import { createPermissionRule } from '@backstage/plugin-permission-node';
import { z } from 'zod';
import { serverPermissionResourceRef } from '../serverResource';

/** Matches virtual nodes (label rackside.dev/virtual-node=true). */
export const isVirtual = createPermissionRule({
  name: 'IS_VIRTUAL',
  description: 'Allow only virtual nodes (rackside.dev/virtual-node=true)',
  resourceRef: serverPermissionResourceRef,
  paramsSchema: z.object({}),
  apply: server => server.virtual,
  toQuery: () => server => server.virtual,
});
