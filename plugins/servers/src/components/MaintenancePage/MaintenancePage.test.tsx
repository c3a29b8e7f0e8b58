import '@testing-library/jest-dom';
import { act } from 'react';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { screen, waitFor, within } from '@testing-library/react';
import { serversApiRef } from '../../api';
import {
  fakeServersApi,
  responseError,
  serverList,
} from '../../testing/fixtures';
import { drainingMaintenance } from '../../testing/drain';
import {
  poweredOffMaintenance,
  rebootingMaintenance,
} from '../../testing/power';
import { ServersLinksProvider } from '../ui/links';
import { MaintenancePage } from './MaintenancePage';
import { formatTime, timelineOf } from '../ui/maintenanceText';

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

  it('a refusal at the moment of acting says the node is left cordoned and where to return it to service', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      drainingMaintenance({
        intent: 'reboot',
        phase: 'Refused',
        terminal: true,
        progress: undefined,
        refusal: {
          reason:
            'reboot of worker-1 was not sent: the quorum changed since it was admitted.',
          members: 3,
          quorum: 2,
          ready: 2,
          margin: 0,
        },
        history: [
          { phase: 'Requested', at: '2026-08-04T10:00:00Z' },
          { phase: 'Cordoned', at: '2026-08-04T10:00:01Z' },
          { phase: 'Draining', at: '2026-08-04T10:00:02Z' },
          { phase: 'Drained', at: '2026-08-04T10:00:03Z' },
          { phase: 'Refused', at: '2026-08-04T10:00:04Z' },
        ],
      }),
    );
    renderPage(api);
    const refusal = await screen.findByTestId('maintenance-refusal');
    expect(refusal).toHaveTextContent(
      'the quorum changed since it was admitted',
    );
    expect(refusal).toHaveTextContent(
      'Members 3, quorum 2, ready 2, margin 0.',
    );
    const back = within(refusal).getByTestId('maintenance-refusal-return');
    expect(back).toHaveTextContent('left cordoned and drained');
    expect(
      within(back).getByRole('link', { name: 'its row on the Servers page' }),
    ).toHaveAttribute('href', '/servers');
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

describe('MaintenancePage of the power verbs', () => {
  it('says what a reboot waits for and when, over which channel, it was sent', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(rebootingMaintenance('worker-3'));
    renderPage(api);
    const power = await screen.findByTestId('maintenance-power');
    expect(
      within(power).getByTestId('maintenance-power-waiting'),
    ).toHaveTextContent('Rebooting — waiting for worker-3 to come back');
    // The record carries the time; it is not said twice.
    expect(
      within(power).queryByTestId('maintenance-power-accepted'),
    ).toBeNull();
    const records = within(power).getAllByTestId('maintenance-power-record');
    expect(records).toHaveLength(1);
    expect(records[0]).toHaveAttribute('data-verb', 'reboot');
    expect(records[0]).toHaveTextContent(
      `Reboot sent at ${formatTime('2026-08-07T11:00:05Z')} over redfish`,
    );
    expect(records[0]).toHaveTextContent('ResetType GracefulRestart');
    expect(within(power).queryByTestId('maintenance-power-off')).toBeNull();
    expect(screen.getByTestId('maintenance-phase-chip')).toHaveTextContent(
      'Rebooting',
    );
  });

  it.each([
    ['True', undefined, 'Off, confirmed by the BMC', 'success'],
    ['False', undefined, 'Shutdown accepted; confirming with the BMC…', 'info'],
    [
      'Unknown',
      'ChannelCannotObserve',
      'Shutdown accepted; the channel cannot confirm the machine is off',
      'warning',
    ],
    [
      'Unknown',
      'ReadbackWindowClosed',
      'The BMC did not confirm Off within the window',
      'warning',
    ],
  ] as const)(
    'puts PowerOffConfirmed %s (%s) in words: "%s"',
    async (status, reason, words, severity) => {
      const api = fakeServersApi(serverList([]));
      api.getMaintenance.mockResolvedValue(
        poweredOffMaintenance('worker-4', status, reason),
      );
      renderPage(api);
      const power = await screen.findByTestId('maintenance-power');
      expect(
        within(power).getByTestId('maintenance-power-waiting'),
      ).toHaveTextContent(
        'Powered off — worker-4 stays off until it is powered on',
      );
      const off = within(power).getByTestId('maintenance-power-off');
      expect(off).toHaveTextContent(words);
      expect(off.className).toContain(
        `MuiAlert-standard${severity[0].toUpperCase()}${severity.slice(1)}`,
      );
      // The conditions list says the same in words, the raw condition beside it.
      const conditions = screen.getByTestId('maintenance-conditions');
      expect(conditions).toHaveTextContent(words);
      expect(conditions).toHaveTextContent(
        `PowerOffConfirmed ${status} (${
          reason ?? (status === 'True' ? 'PowerStateOff' : 'ReadbackRunning')
        })`,
      );
      expect(conditions).not.toHaveTextContent('PowerOffConfirmed: ');
    },
  );

  it('lists every power verb sent, and the error of one the channel did not accept', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      poweredOffMaintenance('worker-4', 'True', undefined, {
        phase: 'Failed',
        terminal: true,
        powerOn: {
          by: 'user:default/guest',
          reason: 'PSU replaced',
          at: '2026-08-07T12:00:00Z',
        },
        power: {
          shutdown: poweredOffMaintenance('worker-4', 'True').power!.shutdown,
          powerOn: {
            recordedAt: '2026-08-07T12:00:01Z',
            channel: 'redfish',
            error: 'the BMC answered 500: internal error',
          },
        },
      }),
    );
    renderPage(api);
    const records = await screen.findAllByTestId('maintenance-power-record');
    expect(records.map(r => r.getAttribute('data-verb'))).toEqual([
      'shutdown',
      'powerOn',
    ]);
    expect(records[0]).toHaveTextContent(
      `Shutdown sent at ${formatTime('2026-08-07T10:00:05Z')} over redfish`,
    );
    expect(records[1]).toHaveTextContent(
      `Power-on recorded at ${formatTime(
        '2026-08-07T12:00:01Z',
      )} over redfish; the channel did not accept it`,
    );
    expect(
      within(records[1]).getByTestId('maintenance-power-record-error'),
    ).toHaveTextContent('the BMC answered 500: internal error');
    expect(screen.getByTestId('maintenance-flag')).toHaveTextContent(
      'Power on requested by user:default/guest',
    );
  });

  it('says when the channel accepted a verb even without its record', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      rebootingMaintenance('worker-3', { power: undefined }),
    );
    renderPage(api);
    expect(
      await screen.findByTestId('maintenance-power-accepted'),
    ).toHaveTextContent(
      `Reboot accepted at ${formatTime('2026-08-07T11:00:05Z')}`,
    );
    expect(screen.queryByTestId('maintenance-power-record')).toBeNull();
  });

  it('has no power section for a drain', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(drainingMaintenance());
    renderPage(api);
    await screen.findByTestId('maintenance-progress');
    expect(screen.queryByTestId('maintenance-power')).toBeNull();
  });
});

describe('MaintenancePage drain options', () => {
  it('says a drain asked for nothing is the default drain', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      drainingMaintenance({
        drain: {
          deleteEmptyDirData: false,
          force: false,
          allowNodeLocalData: false,
        },
      }),
    );
    renderPage(api);
    const section = await screen.findByRole('region', {
      name: 'Drain options',
    });
    expect(
      within(section).queryByTestId('maintenance-drain-option'),
    ).toBeNull();
    expect(
      within(section).getByTestId('maintenance-drain-defaults'),
    ).toHaveTextContent(
      'Default drain: pods with emptyDir volumes are not evicted; pods without a controller are not evicted; pods with data on this node are not evicted; each pod gets its own grace period; no timeout.',
    );
  });

  it('says the same of a maintenance without spec.drain (made with kubectl)', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      drainingMaintenance({ intent: 'reboot', drain: undefined }),
    );
    renderPage(api);
    expect(
      await screen.findByTestId('maintenance-drain-defaults'),
    ).toHaveTextContent(/^Default drain: /);
  });

  it('names each option asked for and who asked, then the defaults of the rest', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      drainingMaintenance({
        drain: {
          deleteEmptyDirData: true,
          force: false,
          allowNodeLocalData: true,
          gracePeriodSeconds: 90,
          timeoutSeconds: 1800,
        },
      }),
    );
    renderPage(api);
    const section = await screen.findByRole('region', {
      name: 'Drain options',
    });
    const options = within(section).getAllByTestId('maintenance-drain-option');
    expect(options.map(o => o.getAttribute('data-option'))).toEqual([
      'deleteEmptyDirData',
      'allowNodeLocalData',
      'gracePeriodSeconds',
      'timeoutSeconds',
    ]);
    expect(options.map(o => o.textContent)).toEqual([
      'Pods with emptyDir volumes: evicted, their emptyDir data is lost (asked by user:default/ops)',
      'Node-local data: pods with data on this node are evicted, their data unavailable until the node is back (asked by user:default/ops)',
      'Grace period: 1 min 30 s for every evicted pod, instead of its own (asked by user:default/ops)',
      'Timeout: after 30 min the drain gives up, the maintenance ends Failed and the node stays cordoned (asked by user:default/ops)',
    ]);
    expect(
      within(section).getByTestId('maintenance-drain-defaults'),
    ).toHaveTextContent(
      'Otherwise the default: pods without a controller are not evicted.',
    );
  });

  it('says who asked when the requester is not recorded', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      drainingMaintenance({
        requestedBy: undefined,
        drain: { force: true },
      }),
    );
    renderPage(api);
    expect(
      await screen.findByTestId('maintenance-drain-option'),
    ).toHaveTextContent(
      'Pods without a controller: evicted, they are not recreated (asked by someone unrecorded)',
    );
  });

  it('has no drain options for a cordon', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      drainingMaintenance({ intent: 'cordon', progress: undefined }),
    );
    renderPage(api);
    await screen.findByTestId('maintenance-who');
    expect(screen.queryByTestId('maintenance-drain-options')).toBeNull();
  });
});

describe('MaintenancePage: alerts', () => {
  const firing = {
    fingerprint: 'f1',
    alertname: 'NodeDown',
    severity: 'critical',
    state: 'firing' as const,
    silencedBy: [],
    startsAt: '2026-08-04T10:00:00Z',
    summary: 'worker-1 does not answer',
    labels: { alertname: 'NodeDown', node: 'worker-1' },
  };
  const silencedByPerson = {
    ...firing,
    fingerprint: 'f2',
    alertname: 'FanNoise',
    severity: 'warning',
    state: 'silenced' as const,
    silencedByRackside: false,
    silencedBy: ['s-person'],
    summary: undefined,
  };

  it("shows the maintenance's silence and the node's alerts, whose silence holds each", async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      drainingMaintenance({
        alerting: {
          silenceIds: ['2f1c-silence'],
          until: '2026-08-04T10:30:00Z',
          renewedAt: '2026-08-04T10:20:00Z',
        },
      }),
    );
    api.getServerAlerts.mockResolvedValue({
      cluster: 'rack',
      node: 'worker-1',
      configured: true,
      items: [firing, silencedByPerson],
      readAt: '2026-08-04T10:21:00Z',
    });
    renderPage(api);
    const silence = await screen.findByTestId('maintenance-silence');
    expect(api.getServerAlerts).toHaveBeenCalledWith('rack', 'worker-1');
    expect(silence).toHaveTextContent('2f1c-silence');
    expect(silence).toHaveTextContent(
      `until ${formatTime('2026-08-04T10:30:00Z')}`,
    );
    expect(silence).toHaveTextContent(
      `renewed at ${formatTime('2026-08-04T10:20:00Z')}`,
    );
    const alerts = screen.getAllByTestId('maintenance-alert');
    expect(alerts.map(a => a.getAttribute('data-alertname'))).toEqual([
      'NodeDown',
      'FanNoise',
    ]);
    expect(alerts[0]).toHaveTextContent('firing');
    expect(alerts[0]).toHaveTextContent('NodeDown · critical');
    expect(alerts[0]).toHaveTextContent('worker-1 does not answer');
    expect(alerts[1]).toHaveTextContent('silenced by a person');
  });

  it('says why nothing is silenced when AlertsSilenced is False, and still shows the page when the alerts cannot be read', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(
      drainingMaintenance({
        conditions: [
          {
            type: 'AlertsSilenced',
            status: 'False',
            reason: 'AlertmanagerUnreachable',
            message: 'connect ECONNREFUSED',
            lastTransitionTime: '2026-08-04T10:00:05Z',
          },
        ],
      }),
    );
    api.getServerAlerts.mockRejectedValue(new Error('500'));
    renderPage(api);
    const why = await screen.findByTestId('maintenance-silence-condition');
    expect(why).toHaveTextContent(
      'Not silenced (AlertmanagerUnreachable): connect ECONNREFUSED',
    );
    expect(screen.queryByTestId('maintenance-silence')).toBeNull();
    expect(screen.queryByTestId('maintenance-alert')).toBeNull();
    expect(screen.getByTestId('maintenance-header')).toBeInTheDocument();
  });

  it('has no Alerts section without an Alertmanager and without a silence', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(drainingMaintenance());
    renderPage(api);
    await screen.findByTestId('maintenance-header');
    await waitFor(() => expect(api.getServerAlerts).toHaveBeenCalled());
    expect(screen.queryByTestId('maintenance-alerts')).toBeNull();
  });

  it('says so when the node has no alert, and when the last read is stale', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(drainingMaintenance());
    api.getServerAlerts.mockResolvedValue({
      cluster: 'rack',
      node: 'worker-1',
      configured: true,
      items: [],
      stale: { error: 'connect ECONNREFUSED', since: '2026-08-04T10:00:00Z' },
    });
    renderPage(api);
    expect(await screen.findByTestId('maintenance-no-alerts')).toBeVisible();
    expect(screen.getByTestId('maintenance-alerts')).toHaveTextContent(
      'Alertmanager could not be read (connect ECONNREFUSED)',
    );
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
