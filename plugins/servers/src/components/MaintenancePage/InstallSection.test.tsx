/*
 * The maintenance page of an upgrade and of a firmware update (issue 47): the target, the
 * versions before and after, and how far it went.
 */
import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { screen, within } from '@testing-library/react';
import type { MaintenanceResponse } from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import { fakeServersApi, serverList } from '../../testing/fixtures';
import { MaintenancePage } from './MaintenancePage';
import { upgradeSteps } from './InstallSection';

const IMAGE = 'factory.talos.dev/installer/abc:v1.12.0';

function maintenance(
  overrides: Partial<MaintenanceResponse>,
): MaintenanceResponse {
  return {
    name: 'worker-1-upgrade-abc',
    nodeName: 'worker-1',
    intent: 'upgrade',
    reason: 'Talos 1.12 (CVE fixes)',
    requestedBy: 'user:default/engineer',
    phase: 'Rebooting',
    terminal: false,
    conditions: [],
    history: [],
    ...overrides,
  };
}

async function renderPage(m: MaintenanceResponse) {
  const api = fakeServersApi(serverList([]));
  api.getMaintenance.mockResolvedValue(m);
  renderInTestApp(<MaintenancePage cluster="rack" name={m.name} />, {
    apis: [[serversApiRef, api]],
  });
  return screen.findByTestId('maintenance-header');
}

const stepStates = () =>
  within(screen.getByRole('list', { name: 'Progress of the upgrade' }))
    .getAllByTestId('install-step')
    .map(s => `${s.textContent} [${s.getAttribute('data-state')}]`);

describe('the upgrade on the maintenance page', () => {
  it('shows the image, the versions before and after, and where it is now', async () => {
    await renderPage(
      maintenance({
        upgrade: {
          request: { image: IMAGE },
          status: {
            image: IMAGE,
            fromVersion: 'v1.11.3',
            toVersion: 'v1.12.0',
            sentAt: '2026-12-07T12:00:00Z',
          },
        },
      }),
    );
    const section = screen.getByTestId('maintenance-upgrade');
    expect(
      within(section).getByRole('heading', { name: 'Talos upgrade' }),
    ).toBeInTheDocument();
    expect(
      within(section).getByTestId('maintenance-upgrade-image'),
    ).toHaveTextContent(`Image: ${IMAGE}`);
    expect(
      within(section).getByTestId('maintenance-upgrade-versions'),
    ).toHaveTextContent(
      'Before: v1.11.3 · Target: v1.12.0 · After: not back yet',
    );
    const states = stepStates();
    expect(states[0]).toMatch(/^Drained: done/);
    expect(states[1]).toMatch(/^Upgrade recorded \(sent at most once\): done/);
    expect(states[2]).toMatch(/^Accepted by Talos: done/);
    expect(states[3]).toBe('Back with a new boot: in progress [now]');
    expect(states[4]).toBe('Returned to service: not yet [waiting]');
    expect(screen.queryByTestId('maintenance-upgrade-rollback')).toBeNull();
  });

  it('a rollback: came back on the old version, Failed, named', async () => {
    await renderPage(
      maintenance({
        phase: 'Failed',
        terminal: true,
        upgrade: {
          request: { image: IMAGE },
          status: {
            image: IMAGE,
            fromVersion: 'v1.11.3',
            toVersion: 'v1.12.0',
            sentAt: '2026-12-07T12:00:00Z',
            cameBackOn: 'v1.11.3',
          },
        },
      }),
    );
    expect(
      screen.getByTestId('maintenance-upgrade-rollback'),
    ).toHaveTextContent(
      'Came back on v1.11.3, not v1.12.0: Talos rolled the upgrade back.',
    );
    expect(
      screen.getByTestId('maintenance-upgrade-versions'),
    ).toHaveTextContent('After: v1.11.3');
    expect(stepStates()[4]).toBe('Returned to service: stopped here [failed]');
  });

  it('before the record: nothing recorded yet, drain in progress', () => {
    expect(
      upgradeSteps('Draining', { request: { image: IMAGE } }).map(s => s.state),
    ).toEqual(['now', 'waiting', 'waiting', 'waiting', 'waiting']);
    expect(
      upgradeSteps('Complete', {
        request: { image: IMAGE },
        status: {
          image: IMAGE,
          toVersion: 'v1.12.0',
          sentAt: '2026-12-07T12:00:00Z',
          cameBackOn: 'v1.12.0',
        },
      }).map(s => s.state),
    ).toEqual(['done', 'done', 'done', 'done', 'done']);
    // Refused from Drained: nothing was sent, and the page says where it stopped.
    expect(
      upgradeSteps('Refused', { request: { image: IMAGE } }).map(s => s.state),
    ).toEqual(['failed', 'waiting', 'waiting', 'waiting', 'waiting']);
  });
});

describe('the firmware update on the maintenance page', () => {
  it("shows the image URI, the BMC's task and the inventory before and after", async () => {
    await renderPage(
      maintenance({
        name: 'worker-1-firmware-abc',
        intent: 'firmware',
        phase: 'Drained',
        firmware: {
          request: {
            imageURI: 'https://fw.plant.example/bios-2.20.bin',
            applyTime: 'OnReset',
          },
          status: {
            before: [
              { id: 'BIOS', name: 'BIOS', version: '2.19.1' },
              { id: 'BMC', name: 'BMC', version: '7.10' },
            ],
            after: [
              { id: 'BIOS', name: 'BIOS', version: '2.20.0' },
              { id: 'BMC', name: 'BMC', version: '7.10' },
            ],
            taskState: 'Completed',
            percent: 100,
            messages: ['Update successful'],
          },
        },
      }),
    );
    const section = screen.getByTestId('maintenance-firmware');
    expect(
      within(section).getByTestId('maintenance-firmware-image'),
    ).toHaveTextContent(
      'Image URI: https://fw.plant.example/bios-2.20.bin · applied at the reset Rackside sends once the task completes',
    );
    expect(
      within(section).getByTestId('maintenance-firmware-task'),
    ).toHaveTextContent("The BMC's task: Completed, 100 %");
    expect(within(section).getByText('Update successful')).toBeInTheDocument();
    expect(
      within(section).getByRole('progressbar', { name: "The BMC's task" }),
    ).toHaveAttribute('aria-valuenow', '100');
    const table = within(section).getByRole('table', {
      name: 'Firmware before and after',
    });
    const rows = within(table)
      .getAllByRole('row')
      .slice(1)
      .map(r => r.textContent);
    expect(rows).toEqual(['BIOS2.19.12.20.0 (changed)', 'BMC7.107.10']);
    expect(screen.queryByTestId('maintenance-upgrade')).toBeNull();
  });

  it('before the first reading: says nothing is recorded yet', async () => {
    await renderPage(
      maintenance({
        name: 'worker-1-firmware-abc',
        intent: 'firmware',
        phase: 'Draining',
        firmware: {
          request: { imageURI: 'https://fw.plant.example/bios-2.20.bin' },
        },
      }),
    );
    expect(screen.getByTestId('maintenance-firmware')).toHaveTextContent(
      'Nothing recorded yet',
    );
  });

  it('another intent has neither section', async () => {
    await renderPage(maintenance({ intent: 'reboot' }));
    expect(screen.queryByTestId('maintenance-upgrade')).toBeNull();
    expect(screen.queryByTestId('maintenance-firmware')).toBeNull();
  });
});
