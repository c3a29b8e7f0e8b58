import { Route, Routes } from 'react-router-dom';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
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
      <TestApiProvider apis={[[serversApiRef, api]]}>
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
});
