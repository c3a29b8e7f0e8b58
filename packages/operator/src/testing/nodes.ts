import {
  CONTROL_PLANE_LABEL,
  VIRTUAL_NODE_LABEL,
} from '@rackside/plugin-servers-common';
import type { NodeView } from '../runtime/nodeView';

/** A Node as the operator's cache holds it, for unit tests: Ready unless told otherwise. */
export function testNode(
  name: string,
  opts: {
    cp?: boolean;
    virtual?: boolean;
    ready?: boolean;
    unschedulable?: boolean;
  } = {},
): NodeView {
  const labels: Record<string, string> = {};
  if (opts.cp) labels[CONTROL_PLANE_LABEL] = '';
  if (opts.virtual) labels[VIRTUAL_NODE_LABEL] = 'true';
  return {
    metadata: { name, labels },
    spec: { unschedulable: opts.unschedulable },
    status: {
      conditions: [
        { type: 'Ready', status: opts.ready === false ? 'False' : 'True' },
      ],
      nodeInfo: { bootID: `boot-${name}-1` },
    },
  };
}
