import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { ApprovalItem } from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import {
  fakeServersApi,
  responseError,
  serverList,
} from '../../testing/fixtures';
import { ServersLinksProvider } from '../ui/links';
import { ApprovalsPage, requestText } from './ApprovalsPage';

function item(overrides: Partial<ApprovalItem> = {}): ApprovalItem {
  return {
    kind: 'maintenance',
    cluster: 'plant-a',
    name: 'worker-1-reboot-abc',
    intent: 'reboot',
    nodes: ['worker-1'],
    reason: 'firmware update TICKET-7',
    requestedBy: 'user:default/guest',
    createdAt: '2026-12-07T10:00:00Z',
    rule: 'reboots-need-two',
    approvers: ['group:default/platform-oncall'],
    expiresAt: '2026-12-07T14:00:00Z',
    requestedRung: 'typed-name',
    ...overrides,
  };
}

function renderPage(api: ReturnType<typeof fakeServersApi>) {
  return renderInTestApp(
    <ServersLinksProvider
      links={{
        servers: () => '/servers',
        maintenance: (c, n) => `/servers/maintenances/${c}/${n}`,
        plan: (c, n) => `/servers/plans/${c}/${n}`,
      }}
    >
      <ApprovalsPage />
    </ServersLinksProvider>,
    { apis: [[serversApiRef, api]] },
  );
}

describe('ApprovalsPage', () => {
  it('lists what awaits my approval, each linking to its page', async () => {
    const api = fakeServersApi(serverList([]));
    api.listApprovalsForMe.mockResolvedValue([
      item(),
      item({
        kind: 'plan',
        name: 'reboot-plan-xyz',
        intent: 'reboot',
        nodes: ['worker-1', 'worker-2', 'worker-3'],
        rule: 'big-plans',
        approvers: ['group:default/platform-oncall', 'user:default/alice'],
      }),
    ]);
    await renderPage(api);
    expect(
      await screen.findByRole('heading', {
        level: 1,
        name: 'Approvals for me',
      }),
    ).toBeInTheDocument();
    const table = await screen.findByRole('table', {
      name: 'Awaiting your approval (2)',
    });
    const [single, planned] = within(table).getAllByTestId('approval-item');
    expect(single).toHaveTextContent('Reboot of worker-1');
    expect(single).toHaveTextContent('acknowledged at the typed name rung');
    expect(single).toHaveTextContent('guest');
    expect(single).toHaveTextContent('firmware update TICKET-7');
    expect(single).toHaveTextContent('reboots-need-two');
    expect(single).toHaveTextContent('platform-oncall');
    expect(
      within(single).getByRole('link', {
        name: 'Open worker-1-reboot-abc to decide',
      }),
    ).toHaveAttribute(
      'href',
      '/servers/maintenances/plant-a/worker-1-reboot-abc',
    );
    expect(planned).toHaveTextContent('Plan: reboot of 3 servers');
    expect(planned).toHaveTextContent('platform-oncall or alice');
    expect(
      within(planned).getByRole('link', {
        name: 'Open reboot-plan-xyz to decide',
      }),
    ).toHaveAttribute('href', '/servers/plans/plant-a/reboot-plan-xyz');
    expect(screen.getByRole('link', { name: '← Servers' })).toHaveAttribute(
      'href',
      '/servers',
    );
  });

  it('says when nothing awaits, and reads again on Refresh', async () => {
    const api = fakeServersApi(serverList([]));
    await renderPage(api);
    expect(await screen.findByTestId('approvals-empty')).toHaveTextContent(
      'Nothing awaits your approval.',
    );
    api.listApprovalsForMe.mockResolvedValue([item()]);
    fireEvent.click(screen.getByRole('button', { name: 'Refresh' }));
    expect(await screen.findByTestId('approval-item')).toBeInTheDocument();
    expect(api.listApprovalsForMe).toHaveBeenCalledTimes(2);
  });

  it("says why the list could not be read, in the backend's words", async () => {
    const api = fakeServersApi(serverList([]));
    api.listApprovalsForMe.mockRejectedValue(
      await responseError(503, 'Service Unavailable', {
        name: 'ServiceUnavailableError',
        message: 'cluster plant-a is not reachable',
      }),
    );
    await renderPage(api);
    await waitFor(() =>
      expect(
        screen.getByText(
          'Could not read the approvals: cluster plant-a is not reachable',
        ),
      ).toBeInTheDocument(),
    );
  });

  it('writes a request in a few words', () => {
    expect(requestText(item({ intent: 'shutdown' }))).toBe(
      'Shutdown of worker-1',
    );
    expect(
      requestText(item({ kind: 'plan', intent: 'drain', nodes: ['a'] })),
    ).toBe('Plan: drain of a');
  });
});
