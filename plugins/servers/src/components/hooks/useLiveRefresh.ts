import { useEffect } from 'react';
import { useSignal } from '@backstage/plugin-signals-react';

/** The signal channel the backend publishes on when a cluster changes. */
export const SERVERS_SIGNAL_CHANNEL = 'rackside:servers';
/** How often to refetch when signals are not available. */
export const POLL_INTERVAL_MS = 10_000;

type ServersSignal = { cluster?: string };

/**
 * Calls `reload` whenever the backend signals that `cluster` changed (nodes,
 * maintenances, drain progress); where the signals plugin is not installed,
 * every {@link POLL_INTERVAL_MS} instead.
 */
export function useLiveRefresh(cluster: string, reload: () => void): void {
  const { lastSignal, isSignalsAvailable } = useSignal<ServersSignal>(
    SERVERS_SIGNAL_CHANNEL,
  );
  useEffect(() => {
    if (lastSignal && lastSignal.cluster === cluster) reload();
  }, [lastSignal, cluster, reload]);
  useEffect(() => {
    if (isSignalsAvailable) return undefined;
    const timer = setInterval(reload, POLL_INTERVAL_MS);
    return () => clearInterval(timer);
  }, [isSignalsAvailable, reload]);
}
