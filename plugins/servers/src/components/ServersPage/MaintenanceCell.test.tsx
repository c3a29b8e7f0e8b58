import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, within } from '@testing-library/react';
import { server } from '../../testing/fixtures';
import type { MaintenanceResponse } from '@rackside/plugin-servers-common';
import { drainingMaintenance } from '../../testing/drain';
import {
  poweredOffMaintenance,
  rebootingMaintenance,
} from '../../testing/power';
import { ServersLinksProvider } from '../ui/links';
import { MaintenanceCell, phaseSummary, shortError } from './MaintenanceCell';

const links = {
  maintenance: (cluster: string, name: string) =>
    `/servers/maintenances/${cluster}/${name}`,
};

function renderCell(maintenance = drainingMaintenance()) {
  return renderInTestApp(
    <ServersLinksProvider links={links}>
      <MaintenanceCell server={server('worker-1', { maintenance })} />
    </ServersLinksProvider>,
  );
}

describe('MaintenanceCell', () => {
  it('puts its tooltip inside the page main landmark', async () => {
    renderInTestApp(
      <main>
        <ServersLinksProvider links={links}>
          <MaintenanceCell
            server={server('worker-1', { maintenance: drainingMaintenance() })}
          />
        </ServersLinksProvider>
      </main>,
    );
    fireEvent.mouseOver(await screen.findByTestId('maintenance-phase'));
    const tooltip = await screen.findByRole('tooltip');
    expect(tooltip.closest('main')).not.toBeNull();
  });

  it('shows a maintenance refused at send time with its numbers, the reason in the tooltip', async () => {
    const m: MaintenanceResponse = {
      ...rebootingMaintenance('worker-1'),
      phase: 'Refused',
      terminal: true,
      refusal: {
        reason:
          'reboot of worker-1 was not sent: the quorum changed since it was admitted.',
        members: 3,
        quorum: 2,
        ready: 2,
        margin: 0,
      },
    };
    renderCell(m);
    const cell = await screen.findByTestId('maintenance-cell');
    expect(within(cell).getByRole('link', { name: 'Refused' })).toBeVisible();
    const refusal = within(cell).getByTestId('maintenance-refusal');
    expect(refusal).toHaveTextContent(
      'Members 3, quorum 2, ready 2, margin 0.',
    );
    fireEvent.mouseOver(refusal);
    expect(await screen.findByRole('tooltip')).toHaveTextContent(
      'the quorum changed since it was admitted',
    );
  });

  it('shows live drain progress: evicted of total, blocking budgets, last error', async () => {
    renderCell();
    const cell = await screen.findByTestId('maintenance-cell');
    const link = within(cell).getByRole('link', { name: 'Draining 3 of 7' });
    expect(link).toHaveAttribute(
      'href',
      '/servers/maintenances/rack/worker-1-drain-abc',
    );
    expect(
      within(cell).getByRole('progressbar', {
        name: 'drain progress of worker-1',
      }),
    ).toHaveAttribute('aria-valuenow', '43');
    expect(within(cell).getByTestId('maintenance-blocking')).toHaveTextContent(
      'blocked by payments',
    );
    const error = within(cell).getByTestId('maintenance-last-error');
    expect(error.textContent).toBe(
      shortError(drainingMaintenance().progress!.lastError!),
    );
    expect(error.textContent!.length).toBeLessThanOrEqual(60);
    expect(error.textContent).toMatch(/…$/);

    fireEvent.mouseOver(error);
    expect(await screen.findByRole('tooltip')).toHaveTextContent(
      'with exponential backoff up to 60 s',
    );
  });

  it('names each blocking budget once', async () => {
    const m = drainingMaintenance();
    m.progress!.blockedBy = [
      { pod: 'shop/payments-1', pdb: 'payments', message: 'no' },
      { pod: 'shop/payments-2', pdb: 'payments', message: 'no' },
      { pod: 'shop/web-2', pdb: 'web', message: 'no' },
    ];
    m.progress!.lastError = undefined;
    renderCell(m);
    expect(await screen.findByTestId('maintenance-blocking')).toHaveTextContent(
      /^blocked by payments, web$/,
    );
    expect(screen.queryByTestId('maintenance-last-error')).toBeNull();
  });

  it('shows a finished drain as its phase, without progress bar or blockers', async () => {
    renderCell(
      drainingMaintenance({
        phase: 'Drained',
        progress: { total: 7, evicted: 7, pending: 0 },
      }),
    );
    const cell = await screen.findByTestId('maintenance-cell');
    expect(within(cell).getByRole('link', { name: 'Drained' })).toBeVisible();
    expect(within(cell).queryByRole('progressbar')).toBeNull();
    expect(within(cell).queryByTestId('maintenance-blockers')).toBeNull();
  });

  it('shows a dash without a maintenance', async () => {
    renderInTestApp(<MaintenanceCell server={server('worker-1')} />);
    expect(await screen.findByText('—')).toBeInTheDocument();
  });

  it('shows the phase as text where the app has no maintenance page', async () => {
    renderInTestApp(
      <MaintenanceCell
        server={server('worker-1', { maintenance: drainingMaintenance() })}
      />,
    );
    expect(await screen.findByText('Draining 3 of 7')).toBeInTheDocument();
    expect(screen.queryByRole('link')).toBeNull();
  });
});

describe('MaintenanceCell of the power verbs', () => {
  function renderPower(maintenance: MaintenanceResponse) {
    return renderInTestApp(
      <ServersLinksProvider links={links}>
        <MaintenanceCell
          server={server(maintenance.nodeName, { maintenance })}
        />
      </ServersLinksProvider>,
    );
  }

  it('says what a reboot waits for', async () => {
    renderPower(rebootingMaintenance('worker-3'));
    const cell = await screen.findByTestId('maintenance-cell');
    expect(cell).toHaveAttribute('data-phase', 'Rebooting');
    expect(
      within(cell).getByRole('link', {
        name: 'Rebooting — waiting for worker-3 to come back',
      }),
    ).toHaveAttribute('href', '/servers/maintenances/rack/worker-3-reboot-abc');
    expect(within(cell).queryByTestId('maintenance-power-off')).toBeNull();
  });

  it.each([
    ['True', undefined, 'Off, confirmed by the BMC', 'confirmed'],
    [
      'False',
      undefined,
      'Shutdown accepted; confirming with the BMC…',
      'pending',
    ],
    [
      'Unknown',
      'ChannelCannotObserve',
      'Shutdown accepted; the channel cannot confirm the machine is off',
      'unconfirmed',
    ],
    [
      'Unknown',
      'ReadbackWindowClosed',
      'The BMC did not confirm Off within the window',
      'unconfirmed',
    ],
  ] as const)(
    'a powered-off row with PowerOffConfirmed %s (%s) says "%s"',
    async (status, reason, words, tone) => {
      renderPower(poweredOffMaintenance('worker-4', status, reason));
      const cell = await screen.findByTestId('maintenance-cell');
      expect(within(cell).getByTestId('maintenance-phase')).toHaveTextContent(
        /^Powered off$/,
      );
      const off = within(cell).getByTestId('maintenance-power-off');
      expect(off).toHaveTextContent(words);
      expect(off).toHaveAttribute('data-tone', tone);
    },
  );

  it('never claims Off without the condition', async () => {
    renderPower(
      poweredOffMaintenance('worker-4', 'True', undefined, { conditions: [] }),
    );
    const off = await screen.findByTestId('maintenance-power-off');
    expect(off).toHaveTextContent(/^Shutdown accepted$/);
    expect(off).not.toHaveTextContent('confirmed');
  });

  it('shows the error of a power verb the channel did not accept', async () => {
    renderPower(
      rebootingMaintenance('worker-1', {
        phase: 'Drained',
        rebootSentAt: undefined,
        power: {
          reboot: {
            recordedAt: '2026-08-07T11:00:04Z',
            channel: 'redfish',
            error: 'connect ECONNREFUSED 127.0.0.1:8443',
          },
        },
      }),
    );
    expect(
      await screen.findByTestId('maintenance-power-error'),
    ).toHaveTextContent('connect ECONNREFUSED 127.0.0.1:8443');
  });
});

describe('phaseSummary', () => {
  it('counts pods only once the operator has counted them', () => {
    expect(phaseSummary(drainingMaintenance())).toBe('Draining 3 of 7');
    expect(
      phaseSummary(
        drainingMaintenance({ progress: { total: 0, evicted: 0, pending: 0 } }),
      ),
    ).toBe('Draining');
    expect(phaseSummary(drainingMaintenance({ phase: 'Cordoned' }))).toBe(
      'Cordoned',
    );
  });

  it('names what a power phase waits for', () => {
    expect(phaseSummary(rebootingMaintenance('worker-3'))).toBe(
      'Rebooting — waiting for worker-3 to come back',
    );
    expect(phaseSummary(poweredOffMaintenance('worker-4', 'False'))).toBe(
      'Powered off',
    );
  });
});

describe('shortError', () => {
  it('keeps a short error and cuts a long one at its first line', () => {
    expect(shortError('timeout')).toBe('timeout');
    expect(shortError('first line\nsecond line')).toBe('first line');
    expect(shortError('x'.repeat(100), 20)).toBe(`${'x'.repeat(19)}…`);
  });
});
