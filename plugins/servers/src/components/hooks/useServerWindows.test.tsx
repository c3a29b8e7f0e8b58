/*
 * The Servers table in windowed mode (issue 21): a large cluster is fetched a window
 * at a time (`limit` + `continue`) as the table scrolls, with its filter and sort sent
 * to the server; a change signal starts a new walk; nothing is fetched in between.
 */
import '@testing-library/jest-dom';
import { act } from 'react';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { ServerListWindowResponse } from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import {
  fakeServersApi,
  responseError,
  server,
  serverList,
  windowOf,
} from '../../testing/fixtures';
import { ClusterSection } from '../ServersPage/ClusterSection';
import { ROW_HEIGHT } from '../ServersPage/tableWindow';
import { MAX_WINDOW_ROWS, WINDOW_ROWS } from './windowRequests';

const rowsOf = () =>
  screen.queryAllByTestId('server-row').map(r => r.getAttribute('data-node'));

function cluster(count: number) {
  return serverList(
    Array.from({ length: count }, (_, i) =>
      server(`node-${String(i).padStart(5, '0')}`, {
        ready: i % 7 !== 3,
        labels: {
          'node-role.kubernetes.io/worker': '',
          zone: i % 2 ? 'west' : 'east',
        },
      }),
    ),
  );
}

function render(api: ReturnType<typeof fakeServersApi>) {
  let deliver: (message: unknown) => void = () => {};
  const signals = {
    subscribe: jest.fn((_channel: string, onMessage: any) => {
      deliver = onMessage;
      return { unsubscribe: jest.fn() };
    }),
  };
  renderInTestApp(<ClusterSection cluster="rack" />, {
    apis: [
      [serversApiRef, api],
      [signalApiRef, signals],
    ],
  });
  return { signal: (message: unknown) => act(() => deliver(message)) };
}

/** The queries the page sent, and the rows the answers carried. */
const sent = (api: ReturnType<typeof fakeServersApi>) =>
  api.listServerWindow.mock.calls.map(call => call[1]);
const received = async (api: ReturnType<typeof fakeServersApi>) => {
  let rows = 0;
  for (const r of api.listServerWindow.mock.results) {
    rows += ((await r.value) as ServerListWindowResponse).items.length;
  }
  return rows;
};

const scrollTo = (row: number) =>
  fireEvent.scroll(screen.getByTestId('server-table-rack'), {
    target: { scrollTop: ROW_HEIGHT * row },
  });

describe('the windowed Servers table', () => {
  afterEach(() => jest.useRealTimers());

  it('fetches the first window, then the next ones by continue as it scrolls; never the whole list', async () => {
    const list = cluster(10_000);
    const api = fakeServersApi(list);
    render(api);
    expect(
      await screen.findByText('10000 of 10000 servers'),
    ).toBeInTheDocument();
    expect(sent(api)).toEqual([
      {
        limit: WINDOW_ROWS,
        continue: undefined,
        filter: undefined,
        sort: 'name',
        direction: 'asc',
      },
    ]);
    // The table is as tall as the cluster: aria-rowcount counts every server.
    expect(screen.getByRole('table')).toHaveAttribute('aria-rowcount', '10001');

    // A window the page has not received shows as loading until it arrives.
    let release: () => void = () => {};
    api.listServerWindow.mockImplementationOnce(
      async (_cluster, query) =>
        new Promise(resolve => {
          release = () => resolve(windowOf(list, query));
        }),
    );
    scrollTo(250);
    expect(await screen.findByTestId('server-rows-loading')).toHaveTextContent(
      'Loading servers…',
    );
    await act(async () => release());
    await waitFor(() => expect(rowsOf()).toContain('node-00250'));
    expect(screen.queryByTestId('server-rows-loading')).toBeNull();
    const second = sent(api)[1];
    expect(second.continue).toBe(String(WINDOW_ROWS));
    expect(second.limit! % WINDOW_ROWS).toBe(0);

    // A jump far down walks there in windows of at most MAX_WINDOW_ROWS.
    scrollTo(3000);
    await waitFor(() => expect(rowsOf()).toContain('node-03000'));
    expect(sent(api).every(q => q.limit! <= MAX_WINDOW_ROWS)).toBe(true);
    expect(
      sent(api)
        .slice(1)
        .every(q => q.continue !== undefined),
    ).toBe(true);
    expect(await received(api)).toBeLessThan(4000);
    expect(api.listServerWindow.mock.calls.length).toBeLessThan(10);
  });

  it('sends the filter once typing rests, and the sort, to the server', async () => {
    const api = fakeServersApi(cluster(500));
    render(api);
    expect(await screen.findByText('500 of 500 servers')).toBeInTheDocument();
    const filter = screen.getByLabelText('Filter servers of rack');
    fireEvent.change(filter, { target: { value: 'z' } });
    fireEvent.change(filter, { target: { value: 'zone' } });
    fireEvent.change(filter, { target: { value: ' Zone=West ' } });
    expect(await screen.findByText('250 of 500 servers')).toBeInTheDocument();
    // One request for the text as it rested, normalised.
    expect(sent(api).slice(1)).toEqual([
      expect.objectContaining({ filter: 'zone=west', continue: undefined }),
    ]);
    expect(rowsOf()[0]).toBe('node-00001');

    fireEvent.click(
      within(screen.getByRole('columnheader', { name: 'Ready' })).getByRole(
        'button',
      ),
    );
    await waitFor(() => expect(rowsOf()[0]).toBe('node-00003'));
    expect(sent(api).at(-1)).toEqual(
      expect.objectContaining({
        filter: 'zone=west',
        sort: 'ready',
        direction: 'asc',
        continue: undefined,
      }),
    );
  });

  it('filters and sorts a cluster that arrived whole in the page, with no request', async () => {
    const api = fakeServersApi(cluster(40));
    render(api);
    expect(await screen.findByText('40 of 40 servers')).toBeInTheDocument();
    fireEvent.change(screen.getByLabelText('Filter servers of rack'), {
      target: { value: 'zone=west' },
    });
    expect(screen.getByText('20 of 40 servers')).toBeInTheDocument();
    fireEvent.click(
      within(screen.getByRole('columnheader', { name: 'Ready' })).getByRole(
        'button',
      ),
    );
    expect(rowsOf()[0]).toBe('node-00003');
    // The same rows a request would have answered (the shared rules).
    expect(rowsOf()).toEqual(
      windowOf(cluster(40), {
        filter: 'zone=west',
        sort: 'ready',
        direction: 'asc',
      })
        .items.slice(0, rowsOf().length)
        .map(s => s.name),
    );
    expect(api.listServerWindow).toHaveBeenCalledTimes(1);
  });

  it('fetches nothing while no signal comes; a signal starts a new walk over the rows in view', async () => {
    jest.useFakeTimers();
    const api = fakeServersApi(cluster(2000));
    const { signal } = render(api);
    expect(await screen.findByText('2000 of 2000 servers')).toBeInTheDocument();
    scrollTo(400);
    await waitFor(() => expect(rowsOf()).toContain('node-00400'));
    const calls = api.listServerWindow.mock.calls.length;
    await act(async () => {
      jest.advanceTimersByTime(60_000);
    });
    expect(api.listServerWindow).toHaveBeenCalledTimes(calls);

    signal({ cluster: 'other' });
    signal({ cluster: 'rack' });
    await waitFor(() =>
      expect(api.listServerWindow).toHaveBeenCalledTimes(calls + 1),
    );
    const walk = sent(api).at(-1)!;
    expect(walk.continue).toBeUndefined();
    expect(walk.limit).toBeGreaterThanOrEqual(420);
    expect(rowsOf()).toContain('node-00400');
  });

  it('starts over when the backend no longer holds the walk (410)', async () => {
    const api = fakeServersApi(cluster(1000));
    render(api);
    expect(await screen.findByText('1000 of 1000 servers')).toBeInTheDocument();
    const gone = await responseError(410, 'Gone', {
      name: 'ExpiredContinueError',
      message: 'continue token expired',
    });
    api.listServerWindow.mockImplementationOnce(async () => {
      throw gone;
    });
    scrollTo(300);
    await waitFor(() => expect(rowsOf()).toContain('node-00300'));
    const queries = sent(api);
    expect(queries[1].continue).toBeDefined();
    expect(queries[2].continue).toBeUndefined();
    expect(screen.queryByText(/Could not load/)).toBeNull();
  });
});
