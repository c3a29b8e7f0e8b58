import { useCallback, useEffect, useState } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import type {
  PreflightAction,
  PreflightResponse,
} from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';

/** The drain options the user picked in the dialog. */
export interface PreflightChoice {
  deleteEmptyDirData: boolean;
  force: boolean;
  /** Evict pods whose data is on the node (docs/drain.md). */
  allowNodeLocalData: boolean;
}

export interface PreflightState {
  /** The pre-flight on screen; what the acknowledgement and token bind. */
  preflight?: PreflightResponse;
  /** Taking the pre-flight failed (403, cluster unreachable, ...). */
  error?: unknown;
  /** A pre-flight is being taken (first, or after an option changed). */
  loading: boolean;
  options: PreflightChoice;
  /** Asks again with other options; clears the acknowledgement. */
  setOption(option: keyof PreflightChoice, value: boolean): void;
  acknowledged: boolean;
  setAcknowledged(value: boolean): void;
  /** The backend said the impact changed and sent this one instead. */
  changed: boolean;
  /** Shows the backend's new pre-flight and asks for a fresh acknowledgement. */
  replace(preflight: PreflightResponse): void;
  /** Takes the pre-flight again. */
  retry(): void;
}

const NO_OPTIONS: PreflightChoice = {
  deleteEmptyDirData: false,
  force: false,
  allowNodeLocalData: false,
};

/**
 * The pre-flight of an action on a node, taken when the dialog opens and again
 * whenever an option changes. Every new pre-flight clears the acknowledgement:
 * what the user ticked was the impact they saw, not the one now on screen.
 * Without an action (the ceremony needs none) it does nothing.
 */
export function usePreflight(
  cluster: string,
  node: string,
  action: PreflightAction | undefined,
): PreflightState {
  const api = useApi(serversApiRef);
  const [options, setOptions] = useState<PreflightChoice>(NO_OPTIONS);
  const [tick, setTick] = useState(0);
  const [state, setState] = useState<{
    preflight?: PreflightResponse;
    error?: unknown;
    loading: boolean;
  }>({ loading: action !== undefined });
  const [acknowledged, setAcknowledged] = useState(false);
  const [changed, setChanged] = useState(false);

  const { deleteEmptyDirData, force, allowNodeLocalData } = options;
  useEffect(() => {
    if (!action) return undefined;
    let cancelled = false;
    setState(s => ({ preflight: s.preflight, loading: true }));
    setAcknowledged(false);
    api
      .preflight(cluster, node, action, {
        deleteEmptyDirData,
        force,
        // Sent only when ticked: a backend older than section 16 never sees it.
        ...(allowNodeLocalData ? { allowNodeLocalData } : {}),
      })
      .then(
        preflight => {
          if (!cancelled) setState({ preflight, loading: false });
        },
        error => {
          if (!cancelled) setState({ error, loading: false });
        },
      );
    return () => {
      cancelled = true;
    };
  }, [
    api,
    cluster,
    node,
    action,
    deleteEmptyDirData,
    force,
    allowNodeLocalData,
    tick,
  ]);

  const setOption = useCallback(
    (option: keyof PreflightChoice, value: boolean) => {
      setChanged(false);
      setOptions(o => ({ ...o, [option]: value }));
    },
    [],
  );
  const replace = useCallback((preflight: PreflightResponse) => {
    setState({ preflight, loading: false });
    setAcknowledged(false);
    setChanged(true);
  }, []);
  const retry = useCallback(() => setTick(t => t + 1), []);

  return {
    ...state,
    options,
    setOption,
    acknowledged,
    setAcknowledged,
    changed,
    replace,
    retry,
  };
}
