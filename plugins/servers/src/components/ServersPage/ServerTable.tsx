import {
  memo,
  useEffect,
  useLayoutEffect,
  useRef,
  useState,
  type UIEvent,
} from 'react';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableContainer from '@mui/material/TableContainer';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import TableSortLabel from '@mui/material/TableSortLabel';
import Typography from '@mui/material/Typography';
import type { Theme } from '@mui/material/styles';
import {
  SERVER_ACTIONS,
  type ServerAction,
  type ServerListItem,
  type ServerSortDirection,
  type ServerSortKey,
} from '@rackside/plugin-servers-common';
import { MaintenanceCell, NO_MAINTENANCE_CLASS } from './MaintenanceCell';
import { ServerCatalogLink } from '../EntityServerContent/ServerCatalogLink';
import { focusInRow, keepFocusInRow } from '../shared/rowFocus';
import { CellChip, cellChipStyles } from './CellChip';
import { CORDONED_CHIP, readyChip } from '../shared/chips';
import { RowActions, rowActionsStyles } from './RowActions';

/** Height of one body row; rows are fixed height so the window is arithmetic. */
export const ROW_HEIGHT = 56;
/** Height of the scrolling viewport. */
export const VIEWPORT_HEIGHT = 560;
/**
 * Rows rendered above and below the visible ones, once the first rows are on
 * screen (`useOverscanAfterFirstPaint`).
 */
export const OVERSCAN = 6;

export type SortKey = ServerSortKey;
export type SortDirection = ServerSortDirection;

/** The rows [start, end) to render for a scroll position. */
export function visibleRange(
  count: number,
  scrollTop: number,
  viewportHeight: number = VIEWPORT_HEIGHT,
  rowHeight: number = ROW_HEIGHT,
  overscan: number = OVERSCAN,
): { start: number; end: number } {
  const first = Math.floor(Math.max(0, scrollTop) / rowHeight);
  const visible = Math.ceil(viewportHeight / rowHeight) + 1;
  const start = Math.min(count, Math.max(0, first - overscan));
  const end = Math.min(count, first + visible + overscan);
  return { start, end: Math.max(start, end) };
}

/**
 * The actions a row offers, in the usual order: the list holds only those
 * offered (for a power verb the backend has already applied the capability rule
 * and the channel's reach) and allowed for the user.
 */
export function rowActions(server: ServerListItem): ServerAction[] {
  return SERVER_ACTIONS.filter(
    action => server.actions?.[action] !== undefined,
  );
}

/**
 * Runs `run` once the browser has painted the frame after this call: its
 * animation frame, then a task (a callback of the frame itself would run before
 * that paint). Returns the cancel.
 */
function afterNextPaint(run: () => void): () => void {
  if (typeof requestAnimationFrame !== 'function') {
    const timer = setTimeout(run, 0);
    return () => clearTimeout(timer);
  }
  let timer: ReturnType<typeof setTimeout> | undefined;
  const frame = requestAnimationFrame(() => {
    timer = setTimeout(run, 0);
  });
  return () => {
    cancelAnimationFrame(frame);
    if (timer !== undefined) clearTimeout(timer);
  };
}

/**
 * The overscan of a table: none until its first rows have been painted, then
 * OVERSCAN. The first rows' render is most of the time between the first
 * window's answer and what the user sees, and the overscan rows are out of
 * view: drawn alone, the rows in view appear sooner (bench/README.md, session
 * 13: about 20 ms less from the answer to the first row), and the rows around
 * them follow a frame later, before anyone scrolls.
 */
function useOverscanAfterFirstPaint(hasRows: boolean): number {
  const [overscan, setOverscan] = useState(0);
  useEffect(() => {
    if (!hasRows || overscan > 0) return undefined;
    return afterNextPaint(() => setOverscan(OVERSCAN));
  }, [hasRows, overscan]);
  return overscan;
}

const COLUMNS = 7;
/** The class of a server's row; the table styles its cells (fixed height). */
const SERVER_ROW_CLASS = 'rackside-server-row';
/** The class of a cell's one line of text, cut with an ellipsis. */
const CELL_TEXT_CLASS = 'rackside-cell-text';
/** The class of the selection cell. */
const SELECT_CELL_CLASS = 'rackside-select-cell';

/**
 * The table's one rule for its server rows. A row is plain elements (tr, td,
 * span, button, input) with classes, styled here once per table: as MUI
 * components each row resolved some thirty styles on every render, most of the
 * first rows' render on a first visit (bench README, session 14). The cells
 * read as MUI's small body cells under Backstage's theme; rows are fixed
 * height for windowing, so a label never wraps. Lengths are written in px:
 * sx reads a bare number as theme spacing for margins and paddings and as a
 * multiple of the theme's radius for borderRadius.
 */
function serverRowStyles(theme: Theme) {
  return {
    [`& .${SERVER_ROW_CLASS}:hover`]: {
      backgroundColor: theme.palette.action.hover,
    },
    [`& .${SERVER_ROW_CLASS} > td`]: {
      height: ROW_HEIGHT,
      boxSizing: 'border-box',
      padding: theme.spacing(0, 2, 0, 2.5),
      overflow: 'hidden',
      whiteSpace: 'nowrap',
      verticalAlign: 'middle',
      textAlign: 'left',
      color: theme.palette.text.primary,
      fontFamily: theme.typography.fontFamily,
      fontSize: theme.typography.body2.fontSize,
      lineHeight: theme.typography.body2.lineHeight,
    },
    [`& .${SERVER_ROW_CLASS} > td.${SELECT_CELL_CLASS}`]: {
      padding: '0 0 0 4px',
      '& input': {
        width: 18,
        height: 18,
        margin: '11px',
        accentColor: theme.palette.primary.main,
        cursor: 'pointer',
      },
    },
    [`& .${NO_MAINTENANCE_CLASS}`]: { color: theme.palette.text.secondary },
    [`& .${CELL_TEXT_CLASS}`]: {
      display: 'block',
      overflow: 'hidden',
      textOverflow: 'ellipsis',
      whiteSpace: 'nowrap',
    },
    ...cellChipStyles(theme),
    ...rowActionsStyles(theme),
  };
}

const ServerRow = memo(function ServerRowContent(props: {
  server: ServerListItem;
  onAction(server: ServerListItem, action: ServerAction): void;
  /** Present when the table offers selection (for a maintenance plan). */
  selected?: boolean;
  onSelect?(server: ServerListItem, selected: boolean): void;
}) {
  const { server, onAction, selected, onSelect } = props;
  const actions = rowActions(server);
  // Read before this render is committed: whether the focus is in the row. If
  // the commit removes the focused button (Drain, once the drain is requested,
  // becomes Return to service), the focus goes to its replacement instead of
  // falling to <body>.
  const rowRef = useRef<HTMLTableRowElement>(null);
  const held = focusInRow(rowRef.current);
  const shown = useRef<readonly ServerAction[]>(actions);
  useLayoutEffect(() => {
    const previous = shown.current;
    shown.current = actions;
    if (held && rowRef.current) {
      keepFocusInRow(rowRef.current, previous, held.action);
    }
  });
  return (
    <tr
      ref={rowRef}
      tabIndex={-1}
      className={SERVER_ROW_CLASS}
      data-testid="server-row"
      data-node={server.name}
    >
      <td>
        <span className={CELL_TEXT_CLASS} title={server.name}>
          {server.name}
        </span>
        <ServerCatalogLink cluster={server.cluster} node={server.name} />
      </td>
      <td>
        <span className={CELL_TEXT_CLASS}>
          {server.roles.join(', ') || '—'}
        </span>
      </td>
      <td>
        {server.controlPlane && (
          <CellChip label="control plane" color="primary" />
        )}
        {server.virtual && <CellChip label="virtual" />}
      </td>
      <td>
        <CellChip variant="outlined" {...readyChip(server.ready)} />
      </td>
      <td>
        {server.unschedulable ? <CellChip {...CORDONED_CHIP} /> : 'Schedulable'}
      </td>
      <td>
        <MaintenanceCell server={server} />
      </td>
      <td>
        <RowActions server={server} actions={actions} onAction={onAction} />
      </td>
      {/* Last: the columns before it keep their places. */}
      {onSelect && (
        <td className={SELECT_CELL_CLASS}>
          <input
            type="checkbox"
            checked={selected === true}
            onChange={e => onSelect(server, e.target.checked)}
            aria-label={`Select ${server.name}`}
            data-testid="server-select"
          />
        </td>
      )}
    </tr>
  );
});

/**
 * Column widths. The table's layout is fixed (the header row decides), so a
 * column given a share of the width gets no more than that share however long
 * its label: the short columns get what their label, its sort arrow and the
 * cell's padding (36 px) need in any theme's table font, in px, and only Name
 * and Markers grow with the page. At 1,280 px the percentages of these
 * columns cut "Ready" and "Schedulable" in a create-app portal.
 */
const HEADERS: { label: string; sort?: SortKey; width?: string }[] = [
  { label: 'Name', sort: 'name', width: '15%' },
  { label: 'Roles', sort: 'role', width: '108px' },
  { label: 'Markers', width: '11%' },
  { label: 'Ready', sort: 'ready', width: '112px' },
  { label: 'Schedulable', width: '128px' },
  { label: 'Maintenance', sort: 'phase', width: '164px' },
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
              <TableCell key={h.label} sx={{ width: h.width }}>
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
