import '@testing-library/jest-dom';
import { act } from 'react';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { screen, waitFor, within } from '@testing-library/react';
import { serversApiRef } from '../api';
import { fakeServersApi, responseError, serverList } from '../testing/fixtures';
import { drainingMaintenance } from '../testing/drain';
import { ServersLinksProvider } from './links';
import { MaintenancePage } from './MaintenancePage';
import { timelineOf } from './maintenanceText';

function renderPage(
  api: ReturnType<typeof fakeServersApi>,
  extraApis: any[] = [],
) {
  return renderInTestApp(
    <ServersLinksProvider
      links={{
        servers: () => '/servers',
        maintenance: (c, n) => `/servers/maintenances/${c}/${n}`,
      }}
    >
      <MaintenancePage cluster="rack" name="worker-1-drain-abc" />
    </ServersLinksProvider>,
    { apis: [[serversApiRef, api], ...extraApis] },
  );
}

const entries = () =>
  within(screen.getByRole('list', { name: 'Phase timeline' })).getAllByTestId(
    'timeline-entry',
  );

describe('MaintenancePage', () => {
  it('shows node, intent and phase, who and why, and the drain progress', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(drainingMaintenance());
    renderPage(api);
    const header = await screen.findByTestId('maintenance-header');
    expect(api.getMaintenance).toHaveBeenCalledWith(
      'rack',
      'worker-1-drain-abc',
    );
    expect(header).toHaveTextContent('Node worker-1 · drain · cluster rack');
    expect(screen.getByTestId('maintenance-phase-chip')).toHaveTextContent(
      'Draining',
    );
    expect(screen.getByRole('link', { name: '← Servers' })).toHaveAttribute(
      'href',
      '/servers',
    );

    const who = screen.getByTestId('maintenance-who');
    expect(who).toHaveTextContent('Requested by user:default/ops');
    expect(who).toHaveTextContent('“kernel update INC-7”');

    const progress = screen.getByTestId('maintenance-progress');
    expect(progress).toHaveTextContent('3 of 7 pods evicted, 4 pending');
    expect(
      within(progress).getByRole('progressbar', { name: 'drain progress' }),
    ).toHaveAttribute('aria-valuenow', '43');
    const blocked = within(progress).getByTestId('maintenance-blocked-by');
    expect(blocked).toHaveTextContent('shop/payments-1 → payments');
    expect(blocked).toHaveTextContent(
      'The disruption budget payments needs 2 healthy pods',
    );
    expect(
      within(progress).getByTestId('maintenance-pending'),
    ).toHaveTextContent('Pods still on the node (4)');
    expect(
      within(progress).getByTestId('maintenance-pending'),
    ).toHaveTextContent('shop/api-1');
    // The whole error, not the table's short form.
    expect(
      within(progress).getByTestId('maintenance-last-error'),
    ).toHaveTextContent('with exponential backoff up to 60 s');
  });

  it('shows the phases as a timeline, oldest first, with who and why of each request', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      drainingMaintenance({
        phase: 'Returning',
        returnToService: {
          by: 'user:default/lead',
          reason: 'kernel verified',
          at: '2026-08-04T10:20:00Z',
        },
        history: [
          // Out of order on purpose: the page sorts by time.
          {
            phase: 'Drained',
            at: '2026-08-04T10:10:00Z',
            message: 'every evictable pod is gone',
          },
          { phase: 'Requested', at: '2026-08-04T10:00:00Z' },
          { phase: 'Cordoned', at: '2026-08-04T10:00:02Z' },
          {
            phase: 'Draining',
            at: '2026-08-04T10:00:05Z',
            message: '7 pods to evict',
          },
          { phase: 'Returning', at: '2026-08-04T10:20:01Z' },
        ],
      }),
    );
    renderPage(api);
    await screen.findByTestId('maintenance-timeline');
    const list = entries();
    expect(list.map(e => e.getAttribute('data-phase') ?? 'request')).toEqual([
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'request',
      'Returning',
    ]);
    expect(list[0]).toHaveTextContent(
      'by user:default/ops: kernel update INC-7',
    );
    expect(list[2]).toHaveTextContent('7 pods to evict');
    expect(list[3]).toHaveTextContent('every evictable pod is gone');
    expect(list[4]).toHaveTextContent('Return to service requested');
    expect(list[4]).toHaveTextContent('by user:default/lead: kernel verified');
    // The phase it is in now is marked; it is not finished.
    expect(within(list[5]).getByText('now')).toBeInTheDocument();
    expect(within(list[3]).queryByText('now')).toBeNull();

    expect(screen.getByTestId('maintenance-flag')).toHaveTextContent(
      'Return to service requested by user:default/lead',
    );
  });

  it('puts conditions in words and explains a refusal with its numbers', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      drainingMaintenance({
        phase: 'Refused',
        terminal: true,
        progress: undefined,
        conditions: [
          {
            type: 'Admitted',
            status: 'False',
            reason: 'QuorumGuard',
            message: 'would drop ready members below quorum',
            lastTransitionTime: '2026-08-04T10:00:01Z',
          },
        ],
        refusal: {
          reason: 'Rebooting cp-1 would drop ready members below quorum',
          members: 3,
          quorum: 2,
          ready: 2,
          margin: 0,
          blockingMaintenance: 'cp-2-reboot-xyz',
        },
        history: [{ phase: 'Refused', at: '2026-08-04T10:00:01Z' }],
      }),
    );
    renderPage(api);
    const conditions = await screen.findByTestId('maintenance-conditions');
    expect(conditions).toHaveTextContent('Admitted: no (QuorumGuard)');
    expect(conditions).toHaveTextContent(
      'would drop ready members below quorum',
    );
    const refusal = screen.getByTestId('maintenance-refusal');
    expect(refusal).toHaveTextContent(
      'Rebooting cp-1 would drop ready members below quorum',
    );
    expect(refusal).toHaveTextContent(
      'Members 3, quorum 2, ready 2, margin 0.',
    );
    expect(
      within(refusal).getByRole('link', { name: 'cp-2-reboot-xyz' }),
    ).toHaveAttribute('href', '/servers/maintenances/rack/cp-2-reboot-xyz');
    expect(screen.queryByTestId('maintenance-progress')).toBeNull();
    // Refused is where it ended: nothing is marked as happening now.
    expect(within(entries()[0]).queryByText('now')).toBeNull();
  });

  it('says so when the maintenance does not exist', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockRejectedValue(
      await responseError(404, 'Not Found', {
        name: 'NotFoundError',
        message: 'no maintenance worker-1-drain-abc',
      }),
    );
    renderPage(api);
    expect(
      await screen.findByText(
        'There is no maintenance worker-1-drain-abc in cluster rack.',
      ),
    ).toBeInTheDocument();
  });

  it('updates live when the servers signal names its cluster', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance
      .mockResolvedValueOnce(drainingMaintenance())
      .mockResolvedValueOnce(
        drainingMaintenance({
          phase: 'Drained',
          progress: { total: 7, evicted: 7, pending: 0 },
          history: [
            ...drainingMaintenance().history,
            { phase: 'Drained', at: '2026-08-04T10:05:00Z' },
          ],
        }),
      );
    let deliver: (message: any) => void = () => {};
    const signals = {
      subscribe: jest.fn((_channel: string, onMessage: any) => {
        deliver = onMessage;
        return { unsubscribe: jest.fn() };
      }),
    };
    renderPage(api, [[signalApiRef, signals]]);
    expect(await screen.findByTestId('maintenance-progress')).toHaveTextContent(
      '3 of 7 pods evicted',
    );
    act(() => deliver({ cluster: 'other' }));
    expect(api.getMaintenance).toHaveBeenCalledTimes(1);
    act(() => deliver({ cluster: 'rack' }));
    await waitFor(() =>
      expect(screen.getByTestId('maintenance-phase-chip')).toHaveTextContent(
        'Drained',
      ),
    );
    expect(screen.getByTestId('maintenance-progress')).toHaveTextContent(
      '7 of 7 pods evicted, 0 pending',
    );
    expect(entries()).toHaveLength(4);
  });
});

describe('timelineOf', () => {
  it('adds the creation as a request when the history does not start at Requested', () => {
    const timeline = timelineOf(
      drainingMaintenance({
        history: [{ phase: 'Cordoned', at: '2026-08-04T10:00:02Z' }],
        abandon: { by: 'user:default/x', reason: 'not needed' },
      }),
    );
    expect(timeline.map(e => e.label)).toEqual([
      'Drain requested',
      'Cordoned',
      'Abandon requested',
    ]);
    expect(timeline[0]).toMatchObject({
      by: 'user:default/ops',
      reason: 'kernel update INC-7',
    });
  });
});
