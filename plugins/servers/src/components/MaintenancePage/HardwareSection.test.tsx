import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { screen, within } from '@testing-library/react';
import { serversApiRef } from '../../api';
import { fakeServersApi, serverList } from '../../testing/fixtures';
import { rebootingMaintenance } from '../../testing/power';
import { ServersLinksProvider } from '../ui/links';
import { formatTime } from '../ui/maintenanceText';
import { MaintenancePage } from './MaintenancePage';

function renderPage(api: ReturnType<typeof fakeServersApi>) {
  return renderInTestApp(
    <ServersLinksProvider links={{ servers: () => '/servers' }}>
      <MaintenancePage cluster="rack" name="worker-1-reboot-abc" />
    </ServersLinksProvider>,
    { apis: [[serversApiRef, api]] },
  );
}

describe('the maintenance page’s Hardware section', () => {
  it('shows the health before and after, and the log entries written during the maintenance', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue({
      ...rebootingMaintenance('worker-1'),
      hardware: {
        before: { rollup: 'OK', readAt: '2026-12-06T10:00:00Z' },
        after: { rollup: 'Critical', readAt: '2026-12-06T10:12:00Z' },
        logEntries: [
          {
            id: '7',
            created: '2026-12-06T10:05:00Z',
            severity: 'Critical',
            message: 'Power supply 1 input lost',
            service: 'System',
          },
        ],
      },
    });
    renderPage(api);
    const section = await screen.findByTestId('maintenance-hardware');
    expect(
      within(section).getByTestId('maintenance-hardware-before'),
    ).toHaveTextContent(
      `Before: OK (read ${formatTime('2026-12-06T10:00:00Z')})`,
    );
    expect(
      within(section).getByTestId('maintenance-hardware-after'),
    ).toHaveTextContent('After: Critical');
    expect(
      within(section).getByTestId('maintenance-hardware-after'),
    ).toHaveTextContent('(was OK)');
    const log = within(section).getByRole('table', {
      name: 'Log entries written during the maintenance',
    });
    expect(log).toHaveTextContent('Power supply 1 input lost');
  });

  it('says the BMC logged nothing, and the end not read yet, while the maintenance runs', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue({
      ...rebootingMaintenance('worker-1'),
      hardware: {
        before: { rollup: 'OK', readAt: '2026-12-06T10:00:00Z' },
        logEntries: [],
      },
    });
    renderPage(api);
    const section = await screen.findByTestId('maintenance-hardware');
    expect(section).toHaveTextContent('After: not read');
    expect(section).toHaveTextContent(
      'The BMC logged nothing during this maintenance.',
    );
  });

  it('is absent on a maintenance without a reading (no ServerBMC)', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(rebootingMaintenance('worker-1'));
    renderPage(api);
    await screen.findByTestId('maintenance-header');
    expect(screen.queryByTestId('maintenance-hardware')).toBeNull();
  });
});
