/*
 * The Servers page's part of upgrades (issue 47): the Talos version column, and the
 * Upgrade and Firmware actions in a row, which open their dialog with the row's version.
 */
import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { ceremonyFor } from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import { fakeServersApi, OK, server, serverList } from '../../testing/fixtures';
import { rebootPreflight } from '../../testing/power';
import { ServersPage } from './ServersPage';

const rowsOf = () => screen.queryAllByTestId('server-row');
const rowOf = (node: string) =>
  rowsOf().find(r => r.getAttribute('data-node') === node)!;

function rack() {
  const api = fakeServersApi(
    serverList([
      server(
        'worker-1',
        { talosVersion: 'v1.11.3' },
        {
          upgrade: { ...OK, ceremony: ceremonyFor('upgrade', 'allow') },
          firmware: { ...OK, ceremony: ceremonyFor('firmware', 'allow') },
        },
      ),
      // Allowed to reboot, not to upgrade: no Upgrade button.
      server(
        'worker-2',
        { talosVersion: 'v1.12.0' },
        { reboot: { ...OK, ceremony: ceremonyFor('reboot', 'allow') } },
      ),
      server('worker-3'),
    ]),
  );
  api.getUpgradeSources.mockResolvedValue({
    talosImages: ['factory.talos.dev/installer/'],
    firmwareSources: ['https://fw.plant.example'],
    firmwareChecksumRequired: [],
  });
  return api;
}

describe('the Talos column', () => {
  it("shows each server's Talos version, and a dash when its Node names none", async () => {
    renderInTestApp(<ServersPage />, { apis: [[serversApiRef, rack()]] });
    await waitFor(() => expect(rowsOf()).toHaveLength(3));
    expect(
      screen.getByRole('columnheader', { name: 'Talos' }),
    ).toBeInTheDocument();
    const cell = (node: string) =>
      within(rowOf(node)).getByTestId('talos-cell');
    expect(cell('worker-1')).toHaveTextContent('v1.11.3');
    expect(cell('worker-2')).toHaveTextContent('v1.12.0');
    expect(cell('worker-3')).toHaveTextContent('—');
  });
});

describe('sorting by the Talos column', () => {
  it('sorts by version, v1.9.0 before v1.12.0, servers without one last either way', async () => {
    const api = fakeServersApi(
      serverList([
        server('a-none'),
        server('b-12', { talosVersion: 'v1.12.0' }),
        server('c-9', { talosVersion: 'v1.9.0' }),
        server('d-11', { talosVersion: 'v1.11.3' }),
      ]),
    );
    renderInTestApp(<ServersPage />, { apis: [[serversApiRef, api]] });
    await waitFor(() => expect(rowsOf()).toHaveLength(4));
    const order = () => rowsOf().map(r => r.getAttribute('data-node'));
    const header = () =>
      within(screen.getByRole('columnheader', { name: /Talos/ })).getByRole(
        'button',
      );
    fireEvent.click(header());
    await waitFor(() =>
      expect(order()).toEqual(['c-9', 'd-11', 'b-12', 'a-none']),
    );
    fireEvent.click(header());
    await waitFor(() =>
      expect(order()).toEqual(['b-12', 'd-11', 'c-9', 'a-none']),
    );
  });
});

describe('the Upgrade and Firmware row actions', () => {
  it('are offered only where the list says the user may, and open their dialog with the row version', async () => {
    const api = rack();
    api.preflight.mockResolvedValue(
      rebootPreflight({
        action: 'upgrade',
        ceremony: ceremonyFor('upgrade', 'allow'),
        // An older backend: no versions in the pre-flight; the row's is shown.
      }),
    );
    renderInTestApp(<ServersPage />, { apis: [[serversApiRef, api]] });
    await waitFor(() => expect(rowsOf()).toHaveLength(3));
    const labels = (node: string) =>
      [
        ...rowOf(node).querySelectorAll('[data-action]'),
        ...document.querySelectorAll(`[data-menu-action]`),
      ].map(b => b.getAttribute('aria-label'));
    expect(labels('worker-2')).not.toContain('Upgrade Talos worker-2');
    // The buttons that fit, or the More actions menu: either way it is there by name.
    const more = within(rowOf('worker-1')).queryByTestId('more-actions');
    if (more) fireEvent.click(more);
    fireEvent.click(
      screen.getByRole(more ? 'menuitem' : 'button', {
        name: 'Upgrade Talos worker-1',
      }),
    );
    const dialog = await screen.findByRole('dialog', {
      name: 'Upgrade Talos: worker-1',
    });
    expect(
      await within(dialog).findByTestId('install-current'),
    ).toHaveTextContent('worker-1 runs Talos v1.11.3 now.');
    expect(api.preflight).toHaveBeenCalledWith(
      'rack',
      'worker-1',
      'upgrade',
      expect.anything(),
    );
  });
});
