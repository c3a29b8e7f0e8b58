import { Route, Routes } from 'react-router-dom';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import {
  MockPermissionApi,
  renderInTestApp,
  TestApiProvider,
} from '@backstage/test-utils';
import { screen } from '@testing-library/react';
import { serversApiRef } from './api';
import { serversPlugin } from './plugin';
import { legacyServersRouteRef } from './routes';
import { LegacyServersRoutes } from './components/ServersRoutes';
import { fakeServersApi, server, serverList } from './testing/fixtures';
import { drainingMaintenance } from './testing/drain';

describe('serversPlugin (legacy frontend system)', () => {
  it('provides the ServersApi', () => {
    const apis = [...serversPlugin.getApis()];
    expect(apis.map(f => f.api.id)).toContain(serversApiRef.id);
  });

  function renderAt(path: string, api: ReturnType<typeof fakeServersApi>) {
    return renderInTestApp(
      <TestApiProvider
        apis={[
          [serversApiRef, api],
          // A legacy app has one (app-defaults); the Servers page asks servers:plan.
          [permissionApiRef, new MockPermissionApi()],
        ]}
      >
        <Routes>
          <Route path="/servers/*" element={<LegacyServersRoutes />} />
        </Routes>
      </TestApiProvider>,
      {
        routeEntries: [path],
        mountedRoutes: { '/servers': legacyServersRouteRef },
      },
    );
  }

  it('serves the Servers page with links to maintenance sub-routes', async () => {
    const api = fakeServersApi(
      serverList([server('worker-1', { maintenance: drainingMaintenance() })]),
    );
    await renderAt('/servers', api);
    expect(
      await screen.findByRole('link', { name: 'Draining 3 of 7' }),
    ).toHaveAttribute('href', '/servers/maintenances/rack/worker-1-drain-abc');
  });

  it('serves a maintenance page under the Servers route', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(drainingMaintenance());
    await renderAt('/servers/maintenances/rack/worker-1-drain-abc', api);
    expect(
      await screen.findByTestId('maintenance-timeline'),
    ).toBeInTheDocument();
    expect(api.getMaintenance).toHaveBeenCalledWith(
      'rack',
      'worker-1-drain-abc',
    );
  });

  it('serves the Approvals for me page under the Servers route, linked from its header', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    await renderAt('/servers', api);
    expect(
      await screen.findByRole('link', { name: 'Approvals for me' }),
    ).toHaveAttribute('href', '/servers/approvals');
    await renderAt('/servers/approvals', api);
    expect(
      await screen.findByTestId('rackside-approvals-page'),
    ).toBeInTheDocument();
    expect(api.listApprovalsForMe).toHaveBeenCalled();
  });

  it('serves a maintenance plan page under the Servers route', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue({
      cluster: 'rack',
      name: 'reboot-plan-1',
      intent: 'reboot',
      phase: 'Running',
      maxParallel: 1,
      reason: 'kernel update INC-9',
      nodes: [{ name: 'worker-1', controlPlane: false, phase: 'Running' }],
      counts: {
        total: 1,
        pending: 0,
        running: 1,
        done: 0,
        failed: 0,
        refused: 0,
        skipped: 0,
      },
      failurePolicy: { tolerate: 0 },
      onCancel: 'finish',
      paused: false,
    });
    await renderAt('/servers/plans/rack/reboot-plan-1', api);
    expect(await screen.findByTestId('plan-phase')).toHaveTextContent(
      'Running',
    );
    expect(api.getPlan).toHaveBeenCalledWith('rack', 'reboot-plan-1');
  });
});
