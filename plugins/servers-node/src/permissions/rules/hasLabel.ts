import { createPermissionRule } from '@backstage/plugin-permission-node';
import { z } from 'zod';
import { serverPermissionResourceRef } from '../serverResource';

/** Matches servers whose Node carries a label, optionally with a value. */
export const hasLabel = createPermissionRule({
  name: 'HAS_LABEL',
  description:
    'Allow servers whose Node has the label, and the value when one is given',
  resourceRef: serverPermissionResourceRef,
  paramsSchema: z.object({
    label: z.string().describe('Label key, e.g. topology.kubernetes.io/zone'),
    value: z.string().optional().describe('Required value of the label'),
  }),
  apply: (server, { label, value }) =>
    Object.prototype.hasOwnProperty.call(server.labels, label) &&
    (value === undefined || server.labels[label] === value),
  toQuery:
    ({ label, value }) =>
    server =>
      Object.prototype.hasOwnProperty.call(server.labels, label) &&
      (value === undefined || server.labels[label] === value),
});
