import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import {
  act,
  configure,
  fireEvent,
  render,
  screen,
  waitFor,
} from '@testing-library/react';
import { serversApiRef } from '../../api';
import {
  fakeServersApi,
  listItemOf,
  OK,
  server,
  serverList,
} from '../../testing/fixtures';
import { focusTarget } from '../ui/rowFocus';
import { POLL_INTERVAL_MS } from './ClusterSection';
import { ServersPage } from './ServersPage';
import { ServerTable } from './ServerTable';

// The page renders in a test app: on a loaded machine (the whole suite on two
// cores) a reload and a dialog take longer than the defaults allow.
configure({ asyncUtilTimeout: 10_000 });
const PAGE_TEST_MS = 30_000;

const DRAINABLE = server('worker-1', {}, { cordon: OK, drain: OK });
/** worker-1 once its drain is requested: Drain and Cordon give way. */
const DRAINING = server(
  'worker-1',
  { unschedulable: true },
  { uncordon: OK, 'maintenance-abandon': OK },
);
const OTHER = server('worker-2', {}, { cordon: OK });

describe('focusTarget', () => {
  it('keeps the focused action where the row still offers it', () => {
    expect(
      focusTarget(['cordon', 'drain'], ['cordon', 'drain', 'reboot'], 'drain'),
    ).toBe('drain');
  });

  it('moves to the action that took its place, else the first', () => {
    expect(
      focusTarget(
        ['cordon', 'drain', 'reboot'],
        ['uncordon', 'maintenance-abandon'],
        'drain',
      ),
    ).toBe('uncordon');
    expect(focusTarget(['cordon', 'drain'], ['drain'], 'cordon')).toBe('drain');
    expect(focusTarget(['cordon'], [], 'cordon')).toBeUndefined();
  });
});

describe('a row whose actions change under the focus', () => {
  const table = (servers: ReturnType<typeof listItemOf>[]) => (
    <ServerTable
      cluster="rack"
      servers={servers}
      sortKey="name"
      sortDirection="asc"
      onSort={jest.fn()}
      onAction={jest.fn()}
    />
  );

  it('moves the focus to the replacement action, not to <body>', () => {
    const view = render(table([listItemOf(DRAINABLE), listItemOf(OTHER)]));
    act(() => screen.getByRole('button', { name: 'Drain worker-1' }).focus());
    view.rerender(table([listItemOf(DRAINING), listItemOf(OTHER)]));
    expect(
      screen.getByRole('button', { name: 'Return to service worker-1' }),
    ).toHaveFocus();
  });

  it('falls back to the row itself when it offers nothing any more', () => {
    const view = render(table([listItemOf(DRAINABLE)]));
    act(() => screen.getByRole('button', { name: 'Cordon worker-1' }).focus());
    view.rerender(table([listItemOf(server('worker-1'))]));
    expect(screen.getByTestId('server-row')).toHaveFocus();
  });

  it('leaves a focus outside the row alone', () => {
    const outside = document.createElement('button');
    document.body.appendChild(outside);
    try {
      const view = render(table([listItemOf(DRAINABLE)]));
      act(() => outside.focus());
      view.rerender(table([listItemOf(DRAINING)]));
      expect(outside).toHaveFocus();
    } finally {
      outside.remove();
    }
  });
});

describe('the focus after an action dialog closes', () => {
  async function openCordon() {
    const cordon = await screen.findByRole('button', {
      name: 'Cordon worker-1',
    });
    act(() => cordon.focus());
    fireEvent.click(cordon);
    await screen.findByRole('dialog', { name: 'Cordon: worker-1' });
    return cordon;
  }

  it(
    'is back on the button that opened it after Escape',
    async () => {
      const api = fakeServersApi(serverList([DRAINABLE, OTHER]));
      await renderInTestApp(<ServersPage />, { apis: [[serversApiRef, api]] });
      const cordon = await openCordon();
      fireEvent.keyDown(screen.getByRole('dialog'), { key: 'Escape' });
      await waitFor(() =>
        expect(screen.queryByRole('dialog')).not.toBeInTheDocument(),
      );
      await waitFor(() => expect(cordon).toHaveFocus());
    },
    PAGE_TEST_MS,
  );

  it(
    'is on the row replacement once the request took the opener away',
    async () => {
      const api = fakeServersApi(serverList([DRAINABLE, OTHER]));
      await renderInTestApp(<ServersPage />, { apis: [[serversApiRef, api]] });
      await openCordon();
      // The reload after the request answers the row as it is now.
      api.listServers.mockResolvedValue(serverList([DRAINING, OTHER]));
      fireEvent.change(screen.getByTestId('action-reason'), {
        target: { value: 'rack move' },
      });
      fireEvent.click(screen.getByRole('button', { name: 'Cordon' }));
      await waitFor(() =>
        expect(screen.queryByRole('dialog')).not.toBeInTheDocument(),
      );
      expect(api.requestAction).toHaveBeenCalledWith(
        'rack',
        'worker-1',
        'cordon',
        expect.objectContaining({ reason: 'rack move' }),
      );
      await waitFor(() =>
        expect(
          screen.getByRole('button', { name: 'Return to service worker-1' }),
        ).toHaveFocus(),
      );
    },
    PAGE_TEST_MS,
  );

  it(
    'is on the row replacement when the row changed while the dialog was open',
    async () => {
      jest.useFakeTimers();
      try {
        const api = fakeServersApi(serverList([DRAINABLE, OTHER]));
        await renderInTestApp(<ServersPage />, {
          apis: [[serversApiRef, api]],
        });
        await openCordon();
        // A refresh lands while the dialog is open: someone else cordoned worker-1.
        const CORDONED = server(
          'worker-1',
          { unschedulable: true },
          { drain: OK, uncordon: OK },
        );
        api.listServers.mockResolvedValue(serverList([CORDONED, OTHER]));
        const reloads = api.listServers.mock.calls.length;
        act(() => {
          jest.advanceTimersByTime(POLL_INTERVAL_MS);
        });
        // (Behind the modal dialog the page is aria-hidden.)
        await waitFor(() =>
          expect(
            screen.getByRole('button', {
              name: 'Return to service worker-1',
              hidden: true,
            }),
          ).toBeInTheDocument(),
        );
        expect(api.listServers.mock.calls.length).toBeGreaterThan(reloads);
        fireEvent.click(screen.getByRole('button', { name: 'Cancel' }));
        await waitFor(() =>
          expect(screen.queryByRole('dialog')).not.toBeInTheDocument(),
        );
        // Cordon is gone: the focus goes to what took its place in the row.
        await waitFor(() =>
          expect(
            screen.getByRole('button', { name: 'Return to service worker-1' }),
          ).toHaveFocus(),
        );
      } finally {
        jest.useRealTimers();
      }
    },
    PAGE_TEST_MS,
  );
});
