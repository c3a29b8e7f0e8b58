/*
 * Since when a Node is Ready, as a healthy return (docs/alerts.md) reads it from the Node
 * cache: its Ready condition's last transition.
 */
import { isNodeReady } from '@rackside/plugin-servers-common';
import type { NodeView } from './nodeView';

/**
 * Since when the node is Ready (ms; 0 when the condition records no transition, so the
 * return's own time counts instead); undefined: not Ready now.
 */
export function readySinceOf(node: NodeView | undefined): number | undefined {
  if (!node || !isNodeReady(node)) return undefined;
  const ready = node.status?.conditions?.find(c => c.type === 'Ready') as
    | { lastTransitionTime?: string }
    | undefined;
  const at = ready?.lastTransitionTime
    ? Date.parse(ready.lastTransitionTime)
    : NaN;
  return Number.isFinite(at) ? at : 0;
}
