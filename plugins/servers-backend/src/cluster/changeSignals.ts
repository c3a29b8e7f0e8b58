import type { LoggerService } from '@backstage/backend-plugin-api';
import type { SignalsService } from '@backstage/plugin-signals-node';

/** Something that says when what a page shows of one cluster changed. */
export interface ClusterChangeSource {
  /** The Backstage cluster name the signal carries. */
  cluster: string;
  onChange(listener: () => void): () => void;
}

/**
 * Broadcasts `{ cluster }` on `channel` when a source says its cluster changed, at
 * most once per `debounceMs` per cluster (a burst of changes is one signal). The
 * server states call `onChange` only for shown changes (readiness, schedulability,
 * roles, labels, a maintenance's phase or progress, power, BMCs), never for a
 * heartbeat, and the machine states only for TalosClusters, TalosMachines and
 * MachineReclaims, so an idle cluster sends nothing and an open page fetches nothing.
 * Servers and machines share one channel and one message: a page refetches whichever
 * it shows. Returns the function that stops it.
 */
export function announceChanges(options: {
  sources: ClusterChangeSource[];
  signals: SignalsService;
  logger: LoggerService;
  channel: string;
  debounceMs: number;
}): () => void {
  const { sources, signals, logger, channel, debounceMs } = options;
  const timers = new Map<string, NodeJS.Timeout>();
  const publish = (cluster: string) =>
    signals
      .publish({
        recipients: { type: 'broadcast' },
        channel,
        message: { cluster },
      })
      .catch(error =>
        logger.warn(
          `could not publish the change signal of ${cluster}: ${error}`,
        ),
      );
  const offs = sources.map(source =>
    source.onChange(() => {
      // One timer per cluster, shared by its sources: servers and machines changing
      // in the same burst are one signal.
      if (timers.has(source.cluster)) return;
      timers.set(
        source.cluster,
        setTimeout(() => {
          timers.delete(source.cluster);
          publish(source.cluster);
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
