import { memo, useLayoutEffect, useRef } from 'react';
import type { Theme } from '@mui/material/styles';
import {
  SERVER_ACTIONS,
  type ServerAction,
  type ServerListItem,
} from '@rackside/plugin-servers-common';
import { MaintenanceCell, NO_MAINTENANCE_CLASS } from './MaintenanceCell';
import { ServerCatalogLink } from '../EntityServerContent/ServerCatalogLink';
import { focusInRow, keepFocusInRow } from '../ui/rowFocus';
import { CellChip, cellChipStyles } from './CellChip';
import { CORDONED_CHIP, readyChip } from '../ui/chips';
import { healthTitle, healthTone, readingAge } from '../ui/healthText';
import { RowActions } from './RowActions';
import { AlertsCell } from './AlertsCell';
import { rowActionsStyles } from './rowActionsStyles';
import { ROW_HEIGHT } from './tableWindow';
import {
  AWAITING_APPROVAL_LABEL,
  isAwaitingApproval,
} from '../ApprovalPanel/approvalText';

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

/** The columns of a server row, the selection cell aside. */
export const COLUMNS = 9;
/** The class of a server's row; the table styles its cells (fixed height). */
const SERVER_ROW_CLASS = 'rackside-server-row';
/** The class of a cell's one line of text, cut with an ellipsis. */
const CELL_TEXT_CLASS = 'rackside-cell-text';
const HEALTH_AGE_CLASS = 'rackside-health-age';
/** The class of the selection cell. */
const SELECT_CELL_CLASS = 'rackside-select-cell';
/** The class of the Talos version's header and cells (ServerTable's HEADERS). */
export const TALOS_COLUMN_CLASS = 'rackside-talos-column';
/**
 * Below this page width the Talos column is not drawn: at 1,280 px the other columns
 * and the row's actions take the whole card (servers.e2e.mjs checks that every header
 * fits). The version stays on the Server tab and in the upgrade dialog.
 */
const TALOS_COLUMN_MIN_PAGE_WIDTH = 1400;

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
export function serverRowStyles(theme: Theme) {
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
    [`& .${TALOS_COLUMN_CLASS}`]: {
      [`@media (max-width: ${TALOS_COLUMN_MIN_PAGE_WIDTH - 0.05}px)`]: {
        display: 'none',
      },
    },
    [`& .${NO_MAINTENANCE_CLASS}`]: { color: theme.palette.text.secondary },
    [`& .${HEALTH_AGE_CLASS}`]: {
      display: 'block',
      color: theme.palette.text.secondary,
      fontSize: theme.typography.caption.fontSize,
      lineHeight: 1.3,
      whiteSpace: 'nowrap',
    },
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

export const ServerRow = memo(function ServerRowContent(props: {
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
        {isAwaitingApproval(server.maintenance?.phase) && (
          <CellChip
            label={AWAITING_APPROVAL_LABEL}
            color="warning"
            testId="awaiting-approval-chip"
          />
        )}
      </td>
      <td>
        <CellChip variant="outlined" {...readyChip(server.ready)} />
        <AlertsCell alerts={server.alerts} />
      </td>
      <td>
        {server.unschedulable ? <CellChip {...CORDONED_CHIP} /> : 'Schedulable'}
      </td>
      <td>
        <MaintenanceCell server={server} />
      </td>
      <td data-testid="health-cell">
        {server.health ? (
          <span title={healthTitle(server.health)}>
            <CellChip
              variant="outlined"
              color={healthTone(server.health.rollup)}
              label={server.health.rollup}
            />
            {server.health.readAt && (
              // Beneath the chip: the column stays as narrow as its header.
              <span className={HEALTH_AGE_CLASS}>
                {readingAge(server.health.readAt, Date.now())}
              </span>
            )}
          </span>
        ) : (
          <span className={NO_MAINTENANCE_CLASS} title="No BMC reading">
            —
          </span>
        )}
      </td>
      <td data-testid="talos-cell" className={TALOS_COLUMN_CLASS}>
        {server.talosVersion ? (
          <span
            className={CELL_TEXT_CLASS}
            title={`Talos ${server.talosVersion}`}
          >
            {server.talosVersion}
          </span>
        ) : (
          <span
            className={NO_MAINTENANCE_CLASS}
            title="The node reports no Talos version"
          >
            —
          </span>
        )}
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
