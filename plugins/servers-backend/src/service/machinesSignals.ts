import type { LoggerService } from '@backstage/backend-plugin-api';
import type { SignalsService } from '@backstage/plugin-signals-node';
import type { MachinesRegistry } from './machinesTypes';

/**
 * Broadcasts `{ cluster }` on `channel` when a cluster's TalosClusters, TalosMachines
 * or MachineReclaims change, at most once per `debounceMs` per cluster: the same
 * message the servers side sends, so a page refetches whichever it shows. Returns
 * the function that stops it.
 */
export function announceMachineChanges(options: {
  machines: MachinesRegistry;
  signals: SignalsService;
  logger: LoggerService;
  channel: string;
  debounceMs: number;
}): () => void {
  const { machines, signals, logger, channel, debounceMs } = options;
  const timers = new Map<string, NodeJS.Timeout>();
  const offs = machines.list().map(state =>
    state.onChange(() => {
      if (timers.has(state.cluster)) return;
      timers.set(
        state.cluster,
        setTimeout(() => {
          timers.delete(state.cluster);
          signals
            .publish({
              recipients: { type: 'broadcast' },
              channel,
              message: { cluster: state.cluster },
            })
            .catch(error =>
              logger.warn(
                `could not publish the machine change signal of ${state.cluster}: ${error}`,
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
