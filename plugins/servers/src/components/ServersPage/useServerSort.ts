import { useCallback, useState } from 'react';
import { FIRST_VIEW } from '../hooks/windowRequests';
import type { SortDirection, SortKey } from './ServerTable';

/**
 * The table's order: a column's header sorts by it ascending, the same header again
 * turns the direction.
 */
export function useServerSort() {
  const [sortKey, setSortKey] = useState<SortKey>(FIRST_VIEW.sortKey);
  const [sortDirection, setSortDirection] = useState<SortDirection>(
    FIRST_VIEW.sortDirection,
  );
  const onSort = useCallback(
    (key: SortKey) => {
      if (key === sortKey) {
        setSortDirection(d => (d === 'asc' ? 'desc' : 'asc'));
      } else {
        setSortKey(key);
        setSortDirection('asc');
      }
    },
    [sortKey],
  );
  return { sortKey, sortDirection, onSort };
}
