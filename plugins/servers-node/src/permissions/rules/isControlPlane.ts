import { createPermissionRule } from '@backstage/plugin-permission-node';
import { z } from 'zod';
import { serverPermissionResourceRef } from '../serverResource';

/** Matches control-plane servers (label node-role.kubernetes.io/control-plane). */
export const isControlPlane = createPermissionRule({
  name: 'IS_CONTROL_PLANE',
  description: 'Allow only control-plane servers',
  resourceRef: serverPermissionResourceRef,
  paramsSchema: z.object({}),
  apply: server => server.controlPlane,
  toQuery: () => server => server.controlPlane,
});
