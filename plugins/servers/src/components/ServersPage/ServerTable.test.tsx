import '@testing-library/jest-dom';
import {
  act,
  fireEvent,
  render,
  screen,
  waitFor,
  within,
} from '@testing-library/react';
import { ceremonyFor } from '@rackside/plugin-servers-common';
import { listItemOf, OK, server } from '../../testing/fixtures';
import { ServerTable } from './ServerTable';
import { OVERSCAN, visibleRange } from './tableWindow';

const rowsOf = () => screen.queryAllByTestId('server-row');
/** A reboot the guard calls a hazard (a member of a thin quorum going down). */
const HAZARD = ceremonyFor('reboot', 'hazard');
const servers = Array.from({ length: 100 }, (_, i) =>
  listItemOf(server(`node-${String(i).padStart(3, '0')}`)),
);
const table = (shown: typeof servers) => (
  <ServerTable
    cluster="rack"
    servers={shown}
    total={servers.length}
    sortKey="name"
    sortDirection="asc"
    onSort={jest.fn()}
    onAction={jest.fn()}
  />
);

/** The animation frames asked for, run only when the test says the browser paints. */
function holdFrames() {
  const frames: FrameRequestCallback[] = [];
  jest.spyOn(window, 'requestAnimationFrame').mockImplementation(callback => {
    frames.push(callback);
    return frames.length;
  });
  jest.spyOn(window, 'cancelAnimationFrame').mockImplementation(() => {});
  return {
    paint: () => act(() => frames.splice(0).forEach(frame => frame(0))),
  };
}

describe('ServerTable: the rows in view first', () => {
  afterEach(() => jest.restoreAllMocks());

  const inView = visibleRange(100, 0, undefined, undefined, 0).end;
  const withOverscan = visibleRange(100, 0).end;

  it('draws only the rows in view until they are painted, then the overscan below them', async () => {
    expect(withOverscan).toBe(inView + OVERSCAN);
    const browser = holdFrames();
    render(table(servers));
    expect(rowsOf()).toHaveLength(inView);
    // Nothing is added before the browser has painted (its frame, then a task).
    await act(async () => {
      await new Promise(resolve => setTimeout(resolve, 0));
    });
    expect(rowsOf()).toHaveLength(inView);
    browser.paint();
    await waitFor(() => expect(rowsOf()).toHaveLength(withOverscan));
    expect(rowsOf().at(-1)).toHaveAttribute(
      'data-node',
      `node-${String(withOverscan - 1).padStart(3, '0')}`,
    );
  });

  it('waits for rows, not for the empty table: a table drawn while loading still draws its first rows alone', async () => {
    const browser = holdFrames();
    const view = render(table([]));
    browser.paint();
    await act(async () => {
      await new Promise(resolve => setTimeout(resolve, 0));
    });
    view.rerender(table(servers));
    expect(rowsOf()).toHaveLength(inView);
    browser.paint();
    await waitFor(() => expect(rowsOf()).toHaveLength(withOverscan));
  });
});

describe('ServerTable: a row is plain elements the table styles once', () => {
  afterEach(() => jest.restoreAllMocks());

  const row = (node: string) =>
    rowsOf().find(r => r.getAttribute('data-node') === node)!;

  it('draws no MUI component in a server row, whatever it shows', () => {
    const shown = [
      listItemOf(
        server(
          'cp-1',
          { roles: ['control-plane'], controlPlane: true, unschedulable: true },
          { uncordon: OK, drain: OK, reboot: { ...OK, ceremony: HAZARD } },
        ),
      ),
      listItemOf(server('edge-0', { virtual: true, ready: false })),
    ];
    render(
      <ServerTable
        cluster="rack"
        servers={shown}
        sortKey="name"
        sortDirection="asc"
        onSort={jest.fn()}
        onAction={jest.fn()}
        selected={new Set(['cp-1'])}
        onSelect={jest.fn()}
      />,
    );
    // Each MUI component resolves its styles per instance on every render: a
    // row of them was most of the first rows' render (bench README, session 14).
    for (const node of ['cp-1', 'edge-0']) {
      const styled = [...row(node).querySelectorAll('[class*="Mui"]')].map(
        e => e.className,
      );
      expect(styled).toEqual([]);
    }
    const cp = within(row('cp-1'));
    expect(cp.getByText('control plane')).toHaveAttribute(
      'data-tone',
      'primary',
    );
    expect(cp.getByText('Cordoned')).toHaveAttribute('data-tone', 'warning');
    expect(cp.getByText('Ready')).toHaveAttribute('data-variant', 'outlined');
    expect(within(row('edge-0')).getByText('NotReady')).toHaveAttribute(
      'data-tone',
      'error',
    );
    expect(cp.getByRole('checkbox', { name: 'Select cp-1' })).toBeChecked();
  });

  it('marks a hazard action for the error colour, and only that one', () => {
    render(
      table([
        listItemOf(
          server(
            'worker-1',
            {},
            { cordon: OK, reboot: { ...OK, ceremony: HAZARD } },
          ),
        ),
      ]),
    );
    const r = within(row('worker-1'));
    expect(r.getByRole('button', { name: 'Reboot worker-1' })).toHaveAttribute(
      'data-tone',
      'hazard',
    );
    expect(
      r.getByRole('button', { name: 'Cordon worker-1' }),
    ).not.toHaveAttribute('data-tone');
  });

  it('hands a click on an action, and on the selection box, to the table', () => {
    const onAction = jest.fn();
    const onSelect = jest.fn();
    const item = listItemOf(server('worker-1', {}, { drain: OK }));
    render(
      <ServerTable
        cluster="rack"
        servers={[item]}
        sortKey="name"
        sortDirection="asc"
        onSort={jest.fn()}
        onAction={onAction}
        selected={new Set()}
        onSelect={onSelect}
      />,
    );
    fireEvent.click(screen.getByRole('button', { name: 'Drain worker-1' }));
    expect(onAction).toHaveBeenCalledWith(item, 'drain');
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select worker-1' }));
    expect(onSelect).toHaveBeenCalledWith(item, true);
  });
});
