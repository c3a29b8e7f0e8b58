/*
 * What the operator reads of a Node (the Node cache keeps servers-node's slimNode of it).
 * Below every kind: the runtime's caches and readiness read it, and so do the maintenance,
 * plan, machine and BMC rows.
 */
import type { NodeLike } from '@rackside/plugin-servers-common';

/** What the controllers need of a Node. */
export interface NodeView extends NodeLike {
  metadata?: NodeLike['metadata'];
  spec?: { unschedulable?: boolean };
  status?: NodeLike['status'] & {
    /** osImage names a Talos node's version, `Talos (v1.12.0)` (upgrades). */
    nodeInfo?: { bootID?: string; systemUUID?: string; osImage?: string };
    addresses?: Array<{ type: string; address: string }>;
  };
}
