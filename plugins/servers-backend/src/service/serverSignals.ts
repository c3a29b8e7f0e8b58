import type { LoggerService } from '@backstage/backend-plugin-api';
import type { SignalsService } from '@backstage/plugin-signals-node';
import type { ClusterRegistry } from './types';

/**
 * Broadcasts `{ cluster }` on `channel` when something a Servers page shows changed in
 * a cluster, at most once per `debounceMs` per cluster (a burst of changes is one
 * signal). A cluster state calls `onChange` only for shown changes (readiness,
 * schedulability, roles, labels, a maintenance's phase or progress, power, BMCs), never
 * for a heartbeat, so an idle cluster sends nothing and an open page fetches nothing.
 * Returns the function that stops it.
 */
export function announceServerChanges(options: {
  clusters: ClusterRegistry;
  signals: SignalsService;
  logger: LoggerService;
  channel: string;
  debounceMs: number;
}): () => void {
  const { clusters, signals, logger, channel, debounceMs } = options;
  const timers = new Map<string, NodeJS.Timeout>();
  const offs = clusters.list().map(cluster =>
    cluster.onChange(() => {
      if (timers.has(cluster.name)) return;
      timers.set(
        cluster.name,
        setTimeout(() => {
          timers.delete(cluster.name);
          signals
            .publish({
              recipients: { type: 'broadcast' },
              channel,
              message: { cluster: cluster.name },
            })
            .catch(error =>
              logger.warn(
                `could not publish the change signal of ${cluster.name}: ${error}`,
              ),
            );
        }, debounceMs),
      );
    }),
  );
  return () => {
    offs.forEach(off => off());
    timers.forEach(timer => clearTimeout(timer));
    timers.clear();
  };
}
