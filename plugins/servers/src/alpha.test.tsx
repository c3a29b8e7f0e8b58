import { renderTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, within } from '@testing-library/react';
import serversPlugin from './alpha';
import { serversApiRef } from './api';
import { fakeServersApi, OK, server, serverList } from './testing/fixtures';
import { drainingMaintenance, preflightResponse } from './testing/drain';

describe('servers plugin (new frontend system)', () => {
  // The pages are lazy: each loader imports its module, which Jest transforms and runs on
  // first use. Loaded here, before any test, that work is not inside a findBy's ceiling
  // (on a loaded machine it took longer); the loaders then find the modules loaded.
  beforeAll(async () => {
    await Promise.all([
      import('./alpha/NfsServersPage'),
      import('./alpha/NfsMaintenancePage'),
      import('./alpha/NfsPlanPage'),
      import('./alpha/NfsAddNodePage'),
      import('./alpha/NfsApprovalsPage'),
    ]);
  });

  it('mounts the Servers page at /servers', async () => {
    renderTestApp({
      features: [serversPlugin],
      initialRouteEntries: ['/servers'],
    });
    expect(
      await screen.findByTestId('rackside-servers-page'),
    ).toBeInTheDocument();
  });

  it('mounts a maintenance page at /servers/maintenances/:cluster/:name', async () => {
    const api = fakeServersApi(serverList([]));
    api.getMaintenance.mockResolvedValue(drainingMaintenance());
    renderTestApp({
      features: [serversPlugin],
      initialRouteEntries: ['/servers/maintenances/rack/worker-1-drain-abc'],
      apis: [[serversApiRef, api]],
    });
    expect(
      await screen.findByTestId('maintenance-timeline'),
    ).toBeInTheDocument();
    expect(api.getMaintenance).toHaveBeenCalledWith(
      'rack',
      'worker-1-drain-abc',
    );
    expect(screen.getByRole('link', { name: '← Servers' })).toHaveAttribute(
      'href',
      '/servers',
    );
  });

  it('mounts a maintenance plan page at /servers/plans/:cluster/:name', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue({
      cluster: 'rack',
      name: 'drain-plan-1',
      intent: 'drain',
      phase: 'Complete',
      maxParallel: 1,
      reason: 'kernel update INC-9',
      nodes: [
        {
          name: 'worker-1',
          controlPlane: false,
          phase: 'Done',
          maintenance: 'drain-plan-1-worker-1',
        },
      ],
      counts: {
        total: 1,
        pending: 0,
        running: 0,
        done: 1,
        failed: 0,
        refused: 0,
        skipped: 0,
      },
      failurePolicy: { tolerate: 0 },
      onCancel: 'finish',
      paused: false,
    });
    renderTestApp({
      features: [serversPlugin],
      initialRouteEntries: ['/servers/plans/rack/drain-plan-1'],
      apis: [[serversApiRef, api]],
    });
    expect(await screen.findByTestId('plan-phase')).toHaveTextContent(
      'Complete',
    );
    expect(
      screen.getByRole('link', { name: 'drain-plan-1-worker-1' }),
    ).toHaveAttribute(
      'href',
      '/servers/maintenances/rack/drain-plan-1-worker-1',
    );
  });

  it('links the Approvals for me page at /servers/approvals from the Servers page header', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    api.listApprovalsForMe.mockResolvedValue([
      {
        kind: 'maintenance',
        cluster: 'rack',
        name: 'worker-1-reboot-abc',
        intent: 'reboot',
        reason: 'firmware update TICKET-7',
        nodes: ['worker-1'],
        rule: 'reboots-need-two',
        approvers: ['group:default/platform-oncall'],
        expiresAt: '2026-12-07T14:00:00Z',
        requestedRung: 'typed-name',
      },
    ]);
    renderTestApp({
      features: [serversPlugin],
      initialRouteEntries: ['/servers'],
      apis: [[serversApiRef, api]],
    });
    const link = await screen.findByRole('link', { name: 'Approvals for me' });
    expect(link).toHaveAttribute('href', '/servers/approvals');
    fireEvent.click(link);
    const page = await screen.findByTestId('rackside-approvals-page');
    expect(
      await within(page).findByRole('link', {
        name: 'Open worker-1-reboot-abc to decide',
      }),
    ).toHaveAttribute('href', '/servers/maintenances/rack/worker-1-reboot-abc');
  });

  it('links a row to its maintenance page and follows the link', async () => {
    const api = fakeServersApi(
      serverList([server('worker-1', { maintenance: drainingMaintenance() })]),
    );
    api.getMaintenance.mockResolvedValue(drainingMaintenance());
    renderTestApp({
      features: [serversPlugin],
      initialRouteEntries: ['/servers'],
      apis: [[serversApiRef, api]],
    });
    const row = await screen.findByTestId('server-row');
    const link = within(row).getByRole('link', { name: 'Draining 3 of 7' });
    expect(link).toHaveAttribute(
      'href',
      '/servers/maintenances/rack/worker-1-drain-abc',
    );
    fireEvent.click(link);
    expect(
      await screen.findByTestId('rackside-maintenance-page'),
    ).toHaveTextContent('Maintenance worker-1-drain-abc');
  });

  it('links the confirmation of a drain to its maintenance page', async () => {
    const api = fakeServersApi(
      serverList([server('worker-1', {}, { drain: OK })]),
    );
    api.preflight.mockResolvedValue(preflightResponse());
    api.requestAction.mockResolvedValue({ name: 'worker-1-drain-abc' });
    renderTestApp({
      features: [serversPlugin],
      initialRouteEntries: ['/servers'],
      apis: [[serversApiRef, api]],
    });
    fireEvent.click(
      await screen.findByRole('button', { name: 'Drain worker-1' }),
    );
    const dialog = await screen.findByRole('dialog');
    await within(dialog).findByTestId('preflight');
    fireEvent.change(within(dialog).getByTestId('action-reason'), {
      target: { value: 'kernel update INC-7' },
    });
    fireEvent.click(within(dialog).getByTestId('preflight-ack'));
    fireEvent.click(within(dialog).getByRole('button', { name: 'Drain' }));
    const done = await screen.findByTestId('action-success');
    expect(
      within(done).getByRole('link', { name: 'follow it' }),
    ).toHaveAttribute('href', '/servers/maintenances/rack/worker-1-drain-abc');
  });
});
