import '@testing-library/jest-dom';
import { mockApis, renderInTestApp } from '@backstage/frontend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { act } from 'react';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { ceremonyFor } from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import {
  fakeServersApi,
  OK,
  windowOf,
  responseError,
  server,
  serverList,
} from '../../testing/fixtures';
import { poweredOffMaintenance } from '../../testing/power';
import { ServersPage } from './ServersPage';
import { startServersPage } from './pageStart';
import { quorumText } from '../ui/QuorumBanner';
import { ROW_HEIGHT } from './tableWindow';

function renderPage(api: ReturnType<typeof fakeServersApi>) {
  return renderInTestApp(<ServersPage />, { apis: [[serversApiRef, api]] });
}

const rowsOf = () => screen.queryAllByTestId('server-row');

describe('ServersPage', () => {
  it('renders one row per server from the API, with the quorum banner', async () => {
    const api = fakeServersApi(
      serverList([
        server('cp-1', {
          roles: ['control-plane'],
          controlPlane: true,
        }),
        server('worker-1'),
        server('worker-2', { ready: false, unschedulable: true }),
      ]),
    );
    renderPage(api);
    await waitFor(() => expect(rowsOf()).toHaveLength(3));
    expect(api.listServerWindow).toHaveBeenCalledWith(
      'rack',
      expect.objectContaining({ limit: 100 }),
    );
    expect(screen.getByTestId('quorum-banner-rack')).toHaveTextContent(
      'members 3, quorum 2, ready 3, margin 1',
    );
    expect(screen.getByText('control plane')).toBeInTheDocument();
    expect(screen.getByText('NotReady')).toBeInTheDocument();
    expect(screen.getByText('Cordoned')).toBeInTheDocument();
  });

  it("asks each available cluster's first window as the clusters answer, before its section renders, and only once", async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    const [rack] = await api.listClusters();
    api.listClusters.mockResolvedValue([
      rack,
      { name: 'far', title: 'Far', available: false, error: 'unreachable' },
    ] as never);
    const answer = api.listServerWindow.getMockImplementation()!;
    const sectionAtAsk: boolean[] = [];
    api.listServerWindow.mockImplementation((cluster, query) => {
      sectionAtAsk.push(
        document.querySelector(`[data-testid="cluster-${cluster}"]`) !== null,
      );
      return answer(cluster, query);
    });
    renderPage(api);
    await waitFor(() => expect(rowsOf()).toHaveLength(1));
    expect(
      screen.getByText('Cluster Far is unavailable: unreachable'),
    ).toBeInTheDocument();
    // One request, for the available cluster, asked before its section was drawn.
    expect(api.listServerWindow.mock.calls).toEqual([
      ['rack', { limit: 100, sort: 'name', direction: 'asc' }],
    ]);
    expect(sectionAtAsk).toEqual([false]);
  });

  it('takes the answers its loader asked for (pageStart.ts) and asks nothing again; a revisit asks afresh', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    const start = startServersPage(api);
    expect(api.listClusters).toHaveBeenCalledTimes(1);
    const first = renderInTestApp(<ServersPage start={start} />, {
      apis: [[serversApiRef, api]],
    });
    await waitFor(() => expect(rowsOf()).toHaveLength(1));
    // The loader's clusters and first window, each asked once in all.
    expect(api.listClusters).toHaveBeenCalledTimes(1);
    expect(api.listServerWindow.mock.calls).toEqual([
      ['rack', { limit: 100, sort: 'name', direction: 'asc' }],
    ]);
    first.unmount();

    // The same page element mounts again (the loader ran once): the answers
    // were taken, so the page asks for fresh ones.
    api.listServerWindow.mockImplementation(async (_cluster, query) =>
      windowOf(serverList([server('worker-1'), server('worker-2')]), query),
    );
    renderInTestApp(<ServersPage start={start} />, {
      apis: [[serversApiRef, api]],
    });
    await waitFor(() => expect(rowsOf()).toHaveLength(2));
    expect(api.listClusters).toHaveBeenCalledTimes(2);
    expect(api.listServerWindow).toHaveBeenCalledTimes(2);
  });

  it('shows a denied clusters request the loader asked as the denial', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    api.listClusters.mockImplementation(async () => {
      throw await responseError(403, 'Forbidden', {
        name: 'NotAllowedError',
        message: 'servers:read denied',
      });
    });
    renderInTestApp(<ServersPage start={startServersPage(api)} />, {
      apis: [[serversApiRef, api]],
    });
    expect(
      await screen.findByText(/not allowed to see servers/),
    ).toBeInTheDocument();
    expect(screen.queryByText(/Could not load clusters/)).toBeNull();
    expect(api.listClusters).toHaveBeenCalledTimes(1);
    expect(api.listServerWindow).not.toHaveBeenCalled();
    expect(rowsOf()).toHaveLength(0);
  });

  it('shows a failed first window as any failed window, and tries again on a change', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    const answer = api.listServerWindow.getMockImplementation()!;
    api.listServerWindow.mockImplementationOnce(async () => {
      throw await responseError(503, 'Service Unavailable', {
        name: 'Error',
        message: 'the watch is not synced yet',
      });
    });
    let deliver: (message: unknown) => void = () => {};
    const signals = {
      subscribe: jest.fn((_channel: string, onMessage: typeof deliver) => {
        deliver = onMessage;
        return { unsubscribe: jest.fn() };
      }),
    };
    renderInTestApp(<ServersPage />, {
      apis: [
        [serversApiRef, api],
        [signalApiRef, signals],
      ],
    });
    expect(
      await screen.findByText(/Could not load the servers of rack/),
    ).toHaveTextContent('the watch is not synced yet');
    expect(api.listServerWindow).toHaveBeenCalledTimes(1);
    api.listServerWindow.mockImplementation(answer);
    // The change signal asks the API afresh: the failed answer is not taken again.
    act(() => deliver({ cluster: 'rack' }));
    await waitFor(() => expect(rowsOf()).toHaveLength(1));
    expect(api.listServerWindow).toHaveBeenCalledTimes(2);
  });

  it('says why quorum cannot be derived', async () => {
    const api = fakeServersApi(
      serverList([server('worker-1')], {
        derived: false,
        reason: 'no node is labelled control plane',
      }),
    );
    renderPage(api);
    expect(await screen.findByTestId('quorum-banner-rack')).toHaveTextContent(
      'Quorum cannot be derived: no node is labelled control plane',
    );
  });

  it('filters rows by name, role and label', async () => {
    const api = fakeServersApi(
      serverList([
        server('cp-1', {
          roles: ['control-plane'],
          labels: { 'node-role.kubernetes.io/control-plane': '' },
        }),
        server('worker-1', { labels: { zone: 'east' } }),
        server('worker-2', { labels: { zone: 'west' } }),
      ]),
    );
    renderPage(api);
    await waitFor(() => expect(rowsOf()).toHaveLength(3));
    const filter = screen.getByLabelText('Filter servers of rack');
    fireEvent.change(filter, { target: { value: 'worker' } });
    expect(rowsOf()).toHaveLength(2);
    fireEvent.change(filter, { target: { value: 'zone=west' } });
    expect(rowsOf().map(r => r.getAttribute('data-node'))).toEqual([
      'worker-2',
    ]);
    fireEvent.change(filter, { target: { value: 'control' } });
    expect(rowsOf().map(r => r.getAttribute('data-node'))).toEqual(['cp-1']);
  });

  it('sorts by readiness when the column is clicked', async () => {
    const api = fakeServersApi(
      serverList([
        server('a-ready'),
        server('b-down', { ready: false }),
        server('c-ready'),
      ]),
    );
    renderPage(api);
    await waitFor(() => expect(rowsOf()).toHaveLength(3));
    fireEvent.click(
      within(screen.getByRole('columnheader', { name: 'Ready' })).getByRole(
        'button',
      ),
    );
    expect(rowsOf()[0]).toHaveAttribute('data-node', 'b-down');
  });

  it('offers only actions that are offered and allowed', async () => {
    const api = fakeServersApi(
      serverList([
        server('worker-1', {}, { cordon: OK }),
        server('worker-2', {}, { cordon: { offered: true, allowed: false } }),
        server('worker-3', {}, { cordon: { offered: false, allowed: true } }),
      ]),
    );
    renderPage(api);
    await waitFor(() => expect(rowsOf()).toHaveLength(3));
    expect(
      screen.getByRole('button', { name: 'Cordon worker-1' }),
    ).toBeVisible();
    expect(
      screen.queryByRole('button', { name: 'Cordon worker-2' }),
    ).not.toBeInTheDocument();
    expect(
      screen.queryByRole('button', { name: 'Cordon worker-3' }),
    ).not.toBeInTheDocument();
  });

  it('submits a cordon with its reason, confirms and refetches', async () => {
    const api = fakeServersApi(
      serverList([server('worker-1', {}, { cordon: OK })]),
    );
    renderPage(api);
    fireEvent.click(
      await screen.findByRole('button', { name: 'Cordon worker-1' }),
    );
    const dialog = await screen.findByRole('dialog');
    const submit = within(dialog).getByRole('button', { name: 'Cordon' });
    expect(submit).toBeDisabled();
    fireEvent.change(within(dialog).getByTestId('action-reason'), {
      target: { value: 'disk replacement INC-42' },
    });
    fireEvent.click(submit);
    await waitFor(() =>
      expect(api.requestAction).toHaveBeenCalledWith(
        'rack',
        'worker-1',
        'cordon',
        { reason: 'disk replacement INC-42' },
      ),
    );
    expect(await screen.findByTestId('action-success')).toHaveTextContent(
      'NodeMaintenance worker-1-cordon-abc',
    );
    await waitFor(() => expect(api.listServerWindow).toHaveBeenCalledTimes(2));
    await waitFor(() =>
      expect(screen.queryByRole('dialog')).not.toBeInTheDocument(),
    );
  });

  it('shows a refusal with the numbers of the 409', async () => {
    const api = fakeServersApi(
      serverList([server('virt-1', {}, { cordon: OK })]),
    );
    api.requestAction.mockRejectedValue(
      await responseError(409, 'Conflict', {
        name: 'ConflictError',
        message: 'virt-1 is a virtual node; Rackside takes no action on it.',
        members: 3,
        quorum: 2,
        margin: 1,
        reason: 'virtual',
      }),
    );
    renderPage(api);
    fireEvent.click(
      await screen.findByRole('button', { name: 'Cordon virt-1' }),
    );
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByTestId('action-reason'), {
      target: { value: 'because of reasons' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cordon' }));
    const error = await within(dialog).findByTestId('action-error');
    expect(error).toHaveTextContent('Refused');
    expect(error).toHaveTextContent(
      'virt-1 is a virtual node; Rackside takes no action on it.',
    );
    expect(error).toHaveTextContent('Members 3, quorum 2, margin 1.');
  });

  it('shows the reason policy message of a 400 under the reason', async () => {
    const api = fakeServersApi(
      serverList([server('worker-1', {}, { cordon: OK })]),
    );
    api.requestAction.mockRejectedValue(
      await responseError(400, 'Bad Request', {
        name: 'InputError',
        message: 'reason must be at least 10 characters',
      }),
    );
    renderPage(api);
    fireEvent.click(
      await screen.findByRole('button', { name: 'Cordon worker-1' }),
    );
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByTestId('action-reason'), {
      target: { value: 'short' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Cordon' }));
    expect(
      await within(dialog).findByText('reason must be at least 10 characters'),
    ).toBeInTheDocument();
  });

  it('marks a hazard and asks for the typed node name', async () => {
    const api = fakeServersApi(
      serverList([
        server(
          'cp-1',
          {},
          {
            'maintenance-abandon': {
              ...OK,
              ceremony: ceremonyFor('maintenance-abandon', 'hazard'),
            },
          },
        ),
      ]),
    );
    renderPage(api);
    fireEvent.click(
      await screen.findByRole('button', { name: 'Abandon maintenance cp-1' }),
    );
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent(
      'This consumes the last of the quorum margin',
    );
    expect(within(dialog).getByTitle('warning')).toBeInTheDocument();
    fireEvent.change(within(dialog).getByTestId('action-reason'), {
      target: { value: 'operator asked for it' },
    });
    const submit = within(dialog).getByRole('button', {
      name: 'Abandon maintenance',
    });
    expect(submit).toBeDisabled();
    fireEvent.change(within(dialog).getByTestId('action-typed-name'), {
      target: { value: 'cp-1' },
    });
    expect(submit).toBeEnabled();
    fireEvent.click(submit);
    await waitFor(() =>
      expect(api.requestAction).toHaveBeenCalledWith(
        'rack',
        'cp-1',
        'maintenance-abandon',
        { reason: 'operator asked for it', typedName: 'cp-1' },
      ),
    );
  });

  it('explains a refused ceremony without a way to submit', async () => {
    const api = fakeServersApi(
      serverList([
        server(
          'cp-1',
          {},
          { cordon: { ...OK, ceremony: ceremonyFor('cordon', 'refuse') } },
        ),
      ]),
    );
    renderPage(api);
    fireEvent.click(await screen.findByRole('button', { name: 'Cordon cp-1' }));
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByTestId('action-refused')).toHaveTextContent(
      'Members 3, quorum 2, margin 1.',
    );
    expect(
      within(dialog).queryByRole('button', { name: 'Cordon' }),
    ).not.toBeInTheDocument();
    expect(within(dialog).queryByTestId('action-reason')).toBeNull();
  });

  it('offers a power verb only where the backend offers it', async () => {
    const api = fakeServersApi(
      serverList([
        server('worker-1', { powerVerbs: ['reboot'] }, { reboot: OK }),
        // The backend applies the capability rule to `offered`: a verb it does
        // not offer is absent, whatever else the row says.
        server(
          'worker-2',
          { powerVerbs: ['reboot'] },
          {
            reboot: {
              offered: false,
              allowed: true,
              why: 'worker-2 has no ServerBMC: the redfish channel does not know its BMC.',
            },
          },
        ),
      ]),
    );
    renderPage(api);
    expect(
      await screen.findByRole('button', { name: 'Reboot worker-1' }),
    ).toBeInTheDocument();
    expect(
      screen.queryByRole('button', { name: 'Reboot worker-2' }),
    ).not.toBeInTheDocument();
  });

  it('offers Power on on a powered-off row, with the power-off state in words', async () => {
    const api = fakeServersApi(
      serverList([
        server(
          'worker-4',
          {
            unschedulable: true,
            ready: false,
            powerVerbs: ['reboot', 'shutdown', 'power-on'],
            maintenance: poweredOffMaintenance('worker-4', 'True'),
          },
          { 'power-on': OK, uncordon: OK },
        ),
        server(
          'worker-6',
          {
            unschedulable: true,
            ready: false,
            powerVerbs: ['reboot', 'shutdown', 'power-on'],
            maintenance: poweredOffMaintenance('worker-6', 'False'),
          },
          { 'power-on': { offered: true, allowed: false } },
        ),
      ]),
    );
    api.requestAction.mockResolvedValue({ name: 'worker-4-shutdown-abc' });
    renderPage(api);
    const power = await screen.findByRole('button', {
      name: 'Power on worker-4',
    });
    expect(
      screen.queryByRole('button', { name: 'Power on worker-6' }),
    ).not.toBeInTheDocument();
    const row4 = power.closest('tr')!;
    expect(within(row4).getByTestId('maintenance-phase')).toHaveTextContent(
      'Powered off',
    );
    expect(within(row4).getByTestId('maintenance-power-off')).toHaveTextContent(
      'Off, confirmed by the BMC',
    );

    fireEvent.click(power);
    const dialog = await screen.findByRole('dialog');
    // Power-on carries a reason only: no pre-flight, no typed name.
    expect(api.preflight).not.toHaveBeenCalled();
    expect(within(dialog).queryByTestId('action-typed-name')).toBeNull();
    expect(within(dialog).queryByTestId('preflight-step')).toBeNull();
    expect(dialog).toHaveTextContent('switch the node on');
    const submit = within(dialog).getByRole('button', { name: 'Power on' });
    expect(submit).toBeDisabled();
    fireEvent.change(within(dialog).getByTestId('action-reason'), {
      target: { value: 'disk swapped, INC-42' },
    });
    fireEvent.click(submit);
    await waitFor(() =>
      expect(api.requestAction).toHaveBeenCalledWith(
        'rack',
        'worker-4',
        'power-on',
        { reason: 'disk swapped, INC-42' },
      ),
    );
  });

  it('renders far fewer rows than servers (virtualised), a window at a time', async () => {
    const many = Array.from({ length: 5000 }, (_, i) =>
      server(`node-${String(i).padStart(4, '0')}`),
    );
    const api = fakeServersApi(serverList(many));
    renderPage(api);
    expect(await screen.findByText('5000 of 5000 servers')).toBeInTheDocument();
    const rendered = rowsOf().length;
    expect(rendered).toBeGreaterThan(0);
    expect(rendered).toBeLessThan(100);
    expect(rowsOf()[0]).toHaveAttribute('data-node', 'node-0000');
    expect(api.listServerWindow).toHaveBeenCalledTimes(1);
    expect(api.listServerWindow.mock.calls[0][1]).toMatchObject({ limit: 100 });

    // Scrolling moves the window: row 1000 is fetched and in view, row 0 is not.
    fireEvent.scroll(screen.getByTestId('server-table-rack'), {
      target: { scrollTop: ROW_HEIGHT * 1000 },
    });
    await waitFor(() =>
      expect(rowsOf().map(r => r.getAttribute('data-node'))).toContain(
        'node-1000',
      ),
    );
    const nodes = rowsOf().map(r => r.getAttribute('data-node'));
    expect(nodes).not.toContain('node-0000');
    expect(nodes.length).toBeLessThan(100);

    // Filtering down to a few rows shows them even from far down the list.
    fireEvent.change(screen.getByLabelText('Filter servers of rack'), {
      target: { value: 'node-000' },
    });
    await waitFor(() => expect(rowsOf()).toHaveLength(10));
    expect(screen.getByText('10 of 5000 servers')).toBeInTheDocument();
  });

  it('shows the maintenance phase with its drain progress', async () => {
    const api = fakeServersApi(
      serverList([
        server('worker-1', {
          unschedulable: true,
          maintenance: {
            name: 'worker-1-drain-1',
            nodeName: 'worker-1',
            intent: 'drain',
            reason: 'kernel update',
            requestedBy: 'user:default/ops',
            phase: 'Draining',
            terminal: false,
            progress: { total: 10, evicted: 4, pending: 6 },
            conditions: [],
            history: [],
          },
        }),
      ]),
    );
    renderPage(api);
    expect(await screen.findByText('Draining 4 of 10')).toBeInTheDocument();
    expect(
      screen.getByRole('progressbar', { name: 'drain progress of worker-1' }),
    ).toHaveAttribute('aria-valuenow', '40');
  });

  it('says how to configure a cluster when none is configured', async () => {
    const api = fakeServersApi(serverList([]));
    api.listClusters.mockResolvedValue([]);
    renderPage(api);
    expect(await screen.findByText('servers.clusters')).toBeInTheDocument();
  });

  it('closes the page when servers:read is denied outright: the clusters answer 403, nothing else is asked', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    api.listClusters.mockRejectedValue(
      await responseError(403, 'Forbidden', {
        name: 'NotAllowedError',
        message: 'you are not allowed to read servers (servers:read)',
      }),
    );
    const permission = mockApis.permission({ authorize: AuthorizeResult.DENY });
    const authorize = jest.spyOn(permission, 'authorize');
    renderInTestApp(<ServersPage />, {
      apis: [[serversApiRef, api], permission],
    });
    expect(
      await screen.findByText(/not allowed to see servers/),
    ).toBeInTheDocument();
    expect(screen.queryByText(/Could not load clusters/)).toBeNull();
    expect(screen.queryByTestId('skip-to-actions')).toBeNull();
    expect(screen.queryByText('Add node')).toBeNull();
    expect(api.listServers).not.toHaveBeenCalled();
    // The clusters request is the decision: no permission round trip before it.
    expect(authorize).not.toHaveBeenCalled();
  });

  it('shows an error that is not a 403 as an error, not as a denial', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    api.listClusters.mockRejectedValue(
      await responseError(503, 'Service Unavailable', {
        name: 'ServiceUnavailableError',
        message: 'the permission backend did not answer',
      }),
    );
    renderPage(api);
    expect(
      await screen.findByText(
        'Could not load clusters: the permission backend did not answer',
      ),
    ).toBeInTheDocument();
    expect(screen.queryByText(/not allowed to see servers/)).toBeNull();
  });

  it('shows the page when servers:read is allowed', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    renderInTestApp(<ServersPage />, {
      apis: [
        [serversApiRef, api],
        mockApis.permission({ authorize: AuthorizeResult.ALLOW }),
      ],
    });
    expect(await screen.findByTestId('server-row')).toBeInTheDocument();
  });

  it('text of the quorum banner', () => {
    expect(
      quorumText({
        derived: true,
        members: 5,
        quorum: 3,
        ready: 4,
        margin: 1,
        goingDown: ['cp-2'],
      }),
    ).toBe('members 5, quorum 3, ready 4, margin 1; going down: cp-2');
    expect(quorumText({ derived: false, reason: 'why' })).toBe(
      'Quorum cannot be derived: why',
    );
    expect(quorumText({ derived: false, hidden: true, reason: 'why' })).toBe(
      'Quorum is not shown: why',
    );
  });
});
