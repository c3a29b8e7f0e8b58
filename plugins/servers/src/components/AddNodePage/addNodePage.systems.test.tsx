import '@testing-library/jest-dom';
import { Route, Routes } from 'react-router-dom';
import { mockApis, renderTestApp } from '@backstage/frontend-test-utils';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { fireEvent, screen } from '@testing-library/react';
import serversPlugin from '../../alpha';
import { machinesApiRef, serversApiRef } from '../../api';
import { serversPlugin as legacyPlugin } from '../../plugin';
import { legacyServersRouteRef } from '../../routes';
import { fakeServersApi, serverList } from '../../testing/fixtures';
import { fakeMachinesApi } from '../../testing/machines';
import { LegacyServersRoutes } from '../ServersRoutes';

describe('the Add node page in both frontend systems', () => {
  // The new system's pages are lazy: each loader imports its module, which Jest
  // transforms and runs on first use. Loaded here, before any test, that work is not
  // inside a findBy's ceiling (on a loaded machine it took longer).
  beforeAll(async () => {
    await Promise.all([
      import('../../alpha/NfsServersPage'),
      import('../../alpha/NfsAddNodePage'),
    ]);
  });

  it('is mounted at /servers/add-node in the new frontend system, linked from the Servers page', async () => {
    const machines = fakeMachinesApi();
    renderTestApp({
      features: [serversPlugin],
      initialRouteEntries: ['/servers'],
      apis: [
        [serversApiRef, fakeServersApi(serverList([]))],
        [machinesApiRef, machines],
      ],
    });
    const link = await screen.findByRole('link', { name: 'Add node' });
    expect(link).toHaveAttribute('href', '/servers/add-node');
    fireEvent.click(link);
    expect(
      await screen.findByTestId('rackside-add-node-page'),
    ).toBeInTheDocument();
    expect(await screen.findAllByTestId('discovery-row')).toHaveLength(3);
    expect(machines.listMachines).toHaveBeenCalledWith('rack');
  });

  it('is the add-node sub-route of ServersPage in the legacy frontend system', async () => {
    expect([...legacyPlugin.getApis()].map(f => f.api.id)).toContain(
      machinesApiRef.id,
    );
    const machines = fakeMachinesApi();
    await renderInTestApp(
      <TestApiProvider
        apis={[
          [serversApiRef, fakeServersApi(serverList([]))],
          [machinesApiRef, machines],
          [permissionApiRef, mockApis.permission()],
        ]}
      >
        <Routes>
          <Route path="/servers/*" element={<LegacyServersRoutes />} />
        </Routes>
      </TestApiProvider>,
      {
        routeEntries: ['/servers/add-node'],
        mountedRoutes: { '/servers': legacyServersRouteRef },
      },
    );
    expect(
      await screen.findByTestId('rackside-add-node-page'),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('link', { name: 'Back to Servers' }),
    ).toHaveAttribute('href', '/servers');
    expect(await screen.findAllByTestId('machine-row')).toHaveLength(2);
  });
});
