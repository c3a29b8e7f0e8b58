import { useCallback, useEffect, useState } from 'react';

export interface Loaded<T> {
  value?: T;
  error?: unknown;
  loading: boolean;
  /** Loads again, keeping the current value on screen meanwhile. */
  reload(): void;
}

/** Runs `load` on mount and on every `reload()`; keeps the last good value. */
export function useLoader<T>(
  load: () => Promise<T>,
  deps: readonly unknown[],
): Loaded<T> {
  const [tick, setTick] = useState(0);
  const [state, setState] = useState<{
    value?: T;
    error?: unknown;
    loading: boolean;
  }>({ loading: true });
  useEffect(() => {
    let cancelled = false;
    setState(s => ({ ...s, loading: true }));
    load().then(
      value => {
        if (!cancelled) setState({ value, loading: false });
      },
      error => {
        if (!cancelled)
          setState(s => ({ value: s.value, error, loading: false }));
      },
    );
    return () => {
      cancelled = true;
    };
    // eslint-disable-next-line react-hooks/exhaustive-deps
  }, [...deps, tick]);
  const reload = useCallback(() => setTick(t => t + 1), []);
  return { ...state, reload };
}
