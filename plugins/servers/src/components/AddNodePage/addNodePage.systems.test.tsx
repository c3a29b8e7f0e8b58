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
    const link = await screen.findByRole(
      'link',
      { name: 'Add node' },
      // The app's routes load lazily: on a loaded machine, later than findBy's 1 s.
      { timeout: 10_000 },
    );
    expect(link).toHaveAttribute('href', '/servers/add-node');
    fireEvent.click(link);
    expect(
      await screen.findByTestId(
        'rackside-add-node-page',
        {},
        { timeout: 10_000 },
      ),
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
      await screen.findByTestId(
        'rackside-add-node-page',
        {},
        { timeout: 10_000 },
      ),
    ).toBeInTheDocument();
    expect(
      screen.getByRole('link', { name: 'Back to Servers' }),
    ).toHaveAttribute('href', '/servers');
    expect(await screen.findAllByTestId('machine-row')).toHaveLength(2);
  });
});
