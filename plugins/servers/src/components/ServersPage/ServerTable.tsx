import { useEffect, useState, type UIEvent } from 'react';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import TableSortLabel from '@mui/material/TableSortLabel';
import Typography from '@mui/material/Typography';
import {
  type ServerAction,
  type ServerListItem,
  type ServerSortDirection,
  type ServerSortKey,
} from '@rackside/plugin-servers-common';
import {
  COLUMNS,
  ServerRow,
  serverRowStyles,
  TALOS_COLUMN_CLASS,
} from './ServerRow';
import {
  ROW_HEIGHT,
  useOverscanAfterFirstPaint,
  VIEWPORT_HEIGHT,
  visibleRange,
} from './tableWindow';

export type SortKey = ServerSortKey;
export type SortDirection = ServerSortDirection;

/**
 * Column widths. The table's layout is fixed (the header row decides), so a
 * column given a share of the width gets no more than that share however long
 * its label: the short columns get what their label, its sort arrow and the
 * cell's padding (36 px) need in any theme's table font, in px, and only Name
 * and Markers grow with the page. At 1,280 px the percentages of these
 * columns cut "Ready" and "Schedulable" in a create-app portal.
 */
const HEADERS: {
  label: string;
  sort?: SortKey;
  width?: string;
  className?: string;
}[] = [
  { label: 'Name', sort: 'name', width: '11%' },
  { label: 'Roles', sort: 'role', width: '100px' },
  { label: 'Markers', width: '10%' },
  { label: 'Ready', sort: 'ready', width: '112px' },
  { label: 'Schedulable', width: '120px' },
  { label: 'Maintenance', sort: 'phase', width: '152px' },
  // The rollup's chip with the reading's age beneath it: the header is the widest part.
  { label: 'Health', sort: 'health', width: '116px' },
  // The Talos version the Node reports ("v1.12.0"): what an upgrade changes. Not drawn
  // on a narrow page (ServerRow's TALOS_COLUMN_CLASS).
  {
    label: 'Talos',
    sort: 'talos',
    width: '100px',
    className: TALOS_COLUMN_CLASS,
  },
  // Actions: the rest; what does not fit is behind More actions (RowActions).
  { label: 'Actions' },
];

/**
 * The selection column (maintenance plans): its own width and padding, not
 * the `checkbox` padding a theme may narrow (create-app's themes make that
 * cell 28 px wide, which cut "Select" to "Se").
 */
const SELECT_COLUMN_WIDTH = 80;

/**
 * The servers of one cluster in a table whose body is windowed: only the rows
 * in view (plus a few) are in the DOM, so thousands of servers stay fast.
 * `servers` may be the first rows of `total` (the windows received so far):
 * the table is as tall as `total`, rows not received yet show as loading, and
 * `onShow` hears how far down the rows in view reach.
 */
export function ServerTable(props: {
  cluster: string;
  servers: ServerListItem[];
  total?: number;
  sortKey: SortKey;
  sortDirection: SortDirection;
  onSort(key: SortKey): void;
  onAction(server: ServerListItem, action: ServerAction): void;
  onShow?(end: number): void;
  /**
   * With `onSelect`: a last column of checkboxes (servers for a maintenance plan), last so
   * the other columns keep their places.
   */
  selected?: ReadonlySet<string>;
  onSelect?(server: ServerListItem, selected: boolean): void;
}) {
  const { cluster, servers, sortKey, sortDirection, onSort, onAction, onShow } =
    props;
  const { selected, onSelect } = props;
  const columns = COLUMNS + (onSelect ? 1 : 0);
  const count = Math.max(props.total ?? 0, servers.length);
  const [scrollTop, setScrollTop] = useState(0);
  // A shrunk list (a filter) may leave the old scroll position past its end.
  const maxTop = Math.max(0, count * ROW_HEIGHT - VIEWPORT_HEIGHT);
  const overscan = useOverscanAfterFirstPaint(servers.length > 0);
  const { start, end } = visibleRange(
    count,
    Math.min(scrollTop, maxTop),
    VIEWPORT_HEIGHT,
    ROW_HEIGHT,
    overscan,
  );
  const loadedEnd = Math.min(end, servers.length);
  const missing = end - Math.max(start, loadedEnd);
  useEffect(() => onShow?.(end), [end, onShow]);
  const onScroll = (e: UIEvent<HTMLDivElement>) =>
    setScrollTop(e.currentTarget.scrollTop);
  const spacer = (height: number, key: string) =>
    height > 0 ? (
      <TableRow key={key} aria-hidden style={{ height }}>
        <TableCell colSpan={columns} sx={{ p: 0, border: 0 }} />
      </TableRow>
    ) : null;
  return (
    <TableContainer
      sx={{ maxHeight: VIEWPORT_HEIGHT }}
      onScroll={onScroll}
      data-testid={`server-table-${cluster}`}
    >
      <Table
        stickyHeader
        size="small"
        sx={theme => ({
          tableLayout: 'fixed',
          minWidth: 900,
          // Rows are fixed height for windowing: a label never wraps.
          '& th, & td': { whiteSpace: 'nowrap' },
          ...serverRowStyles(theme),
        })}
        aria-label={`Servers of ${cluster}`}
        aria-rowcount={count + 1}
      >
        <TableHead>
          <TableRow>
            {HEADERS.map(h => (
              <TableCell
                key={h.label}
                sx={{ width: h.width }}
                className={h.className}
              >
                {h.sort ? (
                  <TableSortLabel
                    active={sortKey === h.sort}
                    direction={sortKey === h.sort ? sortDirection : 'asc'}
                    onClick={() => onSort(h.sort!)}
                  >
                    {h.label}
                  </TableSortLabel>
                ) : (
                  h.label
                )}
              </TableCell>
            ))}
            {onSelect && (
              <TableCell
                sx={{
                  width: `${SELECT_COLUMN_WIDTH}px`,
                  boxSizing: 'border-box',
                  px: 1.5,
                }}
              >
                Select
              </TableCell>
            )}
          </TableRow>
        </TableHead>
        <TableBody>
          {spacer(start * ROW_HEIGHT, 'top')}
          {servers.slice(start, loadedEnd).map(server => (
            <ServerRow
              key={server.name}
              server={server}
              onAction={onAction}
              selected={onSelect ? selected?.has(server.name) : undefined}
              onSelect={onSelect}
            />
          ))}
          {missing > 0 && (
            <TableRow
              key="loading"
              data-testid="server-rows-loading"
              style={{ height: missing * ROW_HEIGHT }}
            >
              <TableCell
                colSpan={columns}
                sx={{ verticalAlign: 'top' }}
                aria-busy
              >
                <Typography variant="body2" color="text.secondary">
                  Loading servers…
                </Typography>
              </TableCell>
            </TableRow>
          )}
          {spacer((count - end) * ROW_HEIGHT, 'bottom')}
          {count === 0 && (
            <TableRow>
              <TableCell colSpan={columns}>
                <Typography variant="body2" color="text.secondary">
                  No servers match.
                </Typography>
              </TableCell>
            </TableRow>
          )}
        </TableBody>
      </Table>
    </TableContainer>
  );
}
