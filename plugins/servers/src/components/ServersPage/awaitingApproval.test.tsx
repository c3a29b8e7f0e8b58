import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { MaintenanceResponse } from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import { fakeServersApi, server, serverList } from '../../testing/fixtures';
import { drainingMaintenance } from '../../testing/drain';
import { ServersLinksProvider } from '../ui/links';
import { ClusterSection } from './ClusterSection';
import { RequestedNotice } from './RequestedNotice';

/** worker-1 waits for an approval of its reboot; worker-2 drains; worker-3 is idle. */
function servers() {
  return serverList([
    server('worker-1', {
      maintenance: drainingMaintenance({
        name: 'worker-1-reboot-abc',
        intent: 'reboot',
        phase: 'AwaitingApproval' as MaintenanceResponse['phase'],
        progress: undefined,
      }),
    }),
    server('worker-2', { maintenance: drainingMaintenance() }),
    server('worker-3'),
  ]);
}

const rowNames = () =>
  screen.getAllByTestId('server-row').map(r => r.getAttribute('data-node'));

describe('Awaiting approval on the Servers page', () => {
  it('marks a row whose maintenance awaits an approval with a chip, and says so in its maintenance cell', async () => {
    const api = fakeServersApi(servers());
    await renderInTestApp(
      <ServersLinksProvider
        links={{ maintenance: (c, n) => `/servers/maintenances/${c}/${n}` }}
      >
        <ClusterSection cluster="rack" />
      </ServersLinksProvider>,
      { apis: [[serversApiRef, api]] },
    );
    await screen.findAllByTestId('server-row');
    const [held, draining, idle] = screen.getAllByTestId('server-row');
    expect(
      within(held).getByTestId('awaiting-approval-chip'),
    ).toHaveTextContent('Awaiting approval');
    expect(
      within(held).getByRole('link', { name: 'Awaiting approval' }),
    ).toHaveAttribute('href', '/servers/maintenances/rack/worker-1-reboot-abc');
    expect(within(held).getByTestId('maintenance-cell')).toHaveAttribute(
      'data-phase',
      'AwaitingApproval',
    );
    for (const row of [draining, idle]) {
      expect(
        within(row).queryByTestId('awaiting-approval-chip'),
      ).not.toBeInTheDocument();
    }
  });

  it('filters to those servers with a toggle that writes the shared filter term phase=AwaitingApproval, and back', async () => {
    const api = fakeServersApi(servers());
    await renderInTestApp(<ClusterSection cluster="rack" />, {
      apis: [[serversApiRef, api]],
    });
    await screen.findAllByTestId('server-row');
    expect(rowNames()).toEqual(['worker-1', 'worker-2', 'worker-3']);
    const toggle = screen.getByRole('button', {
      name: 'Awaiting approval (filter servers of rack)',
    });
    expect(toggle).toHaveAttribute('aria-pressed', 'false');

    fireEvent.click(toggle);
    expect(toggle).toHaveAttribute('aria-pressed', 'true');
    await waitFor(() => expect(rowNames()).toEqual(['worker-1']));
    expect(screen.getByLabelText('Filter servers of rack')).toHaveValue(
      'phase=AwaitingApproval',
    );

    fireEvent.click(toggle);
    expect(toggle).toHaveAttribute('aria-pressed', 'false');
    await waitFor(() =>
      expect(rowNames()).toEqual(['worker-1', 'worker-2', 'worker-3']),
    );
  });

  it('tells the requester who must approve a request a rule held', async () => {
    await renderInTestApp(
      <RequestedNotice
        cluster="rack"
        maintenance="worker-1-reboot-abc"
        approval={{
          rule: 'reboots-need-two',
          approvers: ['group:default/platform-oncall'],
          expiresAt: '2026-12-07T14:00:00Z',
        }}
        onClose={() => {}}
      />,
    );
    expect(await screen.findByTestId('action-success')).toHaveTextContent(
      /Requested: NodeMaintenance worker-1-reboot-abc\. Nothing happens until it is approved by platform-oncall \(rule reboots-need-two, until .*\)/,
    );
  });
});
