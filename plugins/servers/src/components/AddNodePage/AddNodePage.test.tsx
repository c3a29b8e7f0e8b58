import '@testing-library/jest-dom';
import { act } from 'react';
import { mockApis, renderInTestApp } from '@backstage/frontend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import type { ReactNode } from 'react';
import { SWRConfig } from 'swr';
import { machinesApiRef, serversApiRef } from '../../api';
import {
  fakeServersApi,
  responseError,
  serverList,
} from '../../testing/fixtures';
import {
  fakeMachinesApi,
  machinesOfRack,
  pendingMachine,
  reclaim,
  SPARE_UUID,
} from '../../testing/machines';
import { AddNodePage } from './AddNodePage';

/** A signals API that delivers to every subscriber. */
function fakeSignals() {
  const subscribers = new Set<(message: any) => void>();
  return {
    api: {
      subscribe: jest.fn((_channel: string, onMessage: any) => {
        subscribers.add(onMessage);
        return { unsubscribe: () => subscribers.delete(onMessage) };
      }),
    },
    deliver: (message: any) => subscribers.forEach(s => s(message)),
  };
}

/**
 * A fresh cache for `usePermission`, which keeps its answers in SWR's global
 * cache: each test sees its own permission API's answers.
 */
function FreshPermissionAnswers(props: { children: ReactNode }) {
  return (
    <SWRConfig value={{ provider: () => new Map() }}>
      {props.children}
    </SWRConfig>
  );
}

function renderPage(
  machines: ReturnType<typeof fakeMachinesApi>,
  options: { deny?: string[]; signals?: ReturnType<typeof fakeSignals> } = {},
) {
  const permission = mockApis.permission({
    authorize: request =>
      options.deny?.includes(request.permission.name)
        ? AuthorizeResult.DENY
        : AuthorizeResult.ALLOW,
  });
  return renderInTestApp(
    <FreshPermissionAnswers>
      <AddNodePage />
    </FreshPermissionAnswers>,
    {
      apis: [
        [serversApiRef, fakeServersApi(serverList([]))],
        [machinesApiRef, machines],
        [permissionApiRef, permission],
        ...(options.signals
          ? [[signalApiRef, options.signals.api] as const]
          : []),
      ] as any,
    },
  );
}

const discoveryRow = (address: string) =>
  screen
    .getAllByTestId('discovery-row')
    .find(r => r.getAttribute('data-address') === address)!;
const machineRow = (uuid: string) =>
  screen
    .getAllByTestId('machine-row')
    .find(r => r.getAttribute('data-uuid') === uuid)!;

describe('AddNodePage', () => {
  it('shows per cluster the discovery addresses with their state and the machines with their phase', async () => {
    const api = fakeMachinesApi();
    renderPage(api);
    await screen.findAllByTestId('discovery-row');
    expect(api.listMachines).toHaveBeenCalledWith('rack');
    expect(discoveryRow('127.0.10.31')).toHaveTextContent(
      'In maintenance mode: ready to add',
    );
    expect(discoveryRow('127.0.10.42')).toHaveTextContent(
      'Configured by another Talos cluster',
    );
    expect(discoveryRow('127.0.10.42')).toHaveTextContent(
      'the server certificate is not signed by our CA',
    );
    expect(discoveryRow('127.0.10.11')).toHaveTextContent(
      'Member of this cluster',
    );
    // Where discovery may look, as the deployer set it.
    expect(
      screen.getByText(
        /Only addresses in 127\.0\.10\.0\/24 on port 50000 are probed\./,
      ),
    ).toBeInTheDocument();
    expect(machineRow(SPARE_UUID)).toHaveTextContent(
      'Pending: in maintenance mode, not added',
    );
    expect(
      machineRow('616b6ad6-7dd3-45b0-bb99-71c859ec845e'),
    ).toHaveTextContent('cp-1');
  });

  it('offers Add only for a pending machine, and Reset and add beside the AlreadyConfigured address and on the machine list', async () => {
    renderPage(fakeMachinesApi());
    await screen.findAllByTestId('machine-row');
    expect(
      within(machineRow(SPARE_UUID)).getByRole('button', {
        name: `Add ${SPARE_UUID}`,
      }),
    ).toBeInTheDocument();
    expect(
      within(machineRow('616b6ad6-7dd3-45b0-bb99-71c859ec845e')).queryByRole(
        'button',
      ),
    ).toBeNull();
    await waitFor(() =>
      expect(
        within(discoveryRow('127.0.10.42')).getByRole('button', {
          name: 'Reset and add 127.0.10.42',
        }),
      ).toBeInTheDocument(),
    );
    expect(
      within(discoveryRow('127.0.10.31')).queryByRole('button'),
    ).toBeNull();
    expect(
      within(discoveryRow('127.0.10.11')).queryByRole('button'),
    ).toBeNull();
    // The machine list's button opens the dialog without an address.
    fireEvent.click(screen.getByRole('button', { name: 'Reset and add' }));
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent('Add a machine from another cluster');
    expect(within(dialog).getByTestId('reclaim-address')).toHaveValue('');
  });

  it('opens the dialog prefilled with the AlreadyConfigured address', async () => {
    renderPage(fakeMachinesApi());
    const button = await screen.findByRole('button', {
      name: 'Reset and add 127.0.10.42',
    });
    fireEvent.click(button);
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByTestId('reclaim-address')).toHaveValue(
      '127.0.10.42',
    );
    expect(
      within(dialog).getByTestId('reclaim-credential-warning'),
    ).toHaveTextContent(
      'Rackside keeps it in a Secret in namespace rackside-system of rack',
    );
  });

  it('without machines:reclaim shows the command-line hint and why, and no Reset and add', async () => {
    const api = fakeMachinesApi();
    api.canReclaim.mockResolvedValue({
      allowed: false,
      reason: 'you do not hold machines:reclaim',
    });
    renderPage(api);
    const hint = await screen.findByTestId('reset-hint-127.0.10.42');
    expect(hint).toHaveTextContent(
      "talosctl --talosconfig <other cluster's talosconfig> -n 127.0.10.42 reset --graceful --reboot --system-labels-to-wipe STATE --system-labels-to-wipe EPHEMERAL",
    );
    expect(hint).toHaveTextContent(
      'Reset and add is not offered: you do not hold machines:reclaim.',
    );
    expect(screen.queryByRole('button', { name: /Reset and add/ })).toBeNull();
  });

  it('adds a pending machine with a reason', async () => {
    const api = fakeMachinesApi();
    renderPage(api);
    fireEvent.click(
      await screen.findByRole('button', { name: `Add ${SPARE_UUID}` }),
    );
    const dialog = await screen.findByRole('dialog');
    expect(dialog).toHaveTextContent(`Add machine ${SPARE_UUID}`);
    const add = within(dialog).getByRole('button', { name: 'Add' });
    expect(add).toBeDisabled();
    fireEvent.change(within(dialog).getByTestId('join-reason'), {
      target: { value: 'rack 4 needs another worker' },
    });
    fireEvent.click(add);
    await waitFor(() =>
      expect(api.joinMachine).toHaveBeenCalledWith('rack', SPARE_UUID, {
        reason: 'rack 4 needs another worker',
      }),
    );
    expect(await screen.findByTestId('machines-notice')).toHaveTextContent(
      `Adding ${SPARE_UUID}`,
    );
    await waitFor(() => expect(api.listMachines).toHaveBeenCalledTimes(2));
  });

  it('keeps the focus on the machine row once its Add button is gone', async () => {
    const api = fakeMachinesApi();
    renderPage(api);
    const addButton = await screen.findByRole('button', {
      name: `Add ${SPARE_UUID}`,
    });
    act(() => addButton.focus());
    fireEvent.click(addButton);
    const dialog = await screen.findByRole('dialog');
    // The reload after the join answers the machine as being added: no Add.
    api.listMachines.mockResolvedValue(
      machinesOfRack({
        machines: [
          pendingMachine({
            join: {
              by: 'user:default/guest',
              reason: 'rack 4 needs another worker',
            },
          }),
        ],
      }),
    );
    fireEvent.change(within(dialog).getByTestId('join-reason'), {
      target: { value: 'rack 4 needs another worker' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add' }));
    await waitFor(() =>
      expect(
        screen.queryByRole('button', { name: `Add ${SPARE_UUID}` }),
      ).toBeNull(),
    );
    const row = screen
      .getAllByTestId('machine-row')
      .find(r => r.dataset.uuid === SPARE_UUID)!;
    await waitFor(() => expect(row).toHaveFocus());
  }, 30_000);

  it('shows the reason policy under the reason when the join is refused for it', async () => {
    const api = fakeMachinesApi();
    api.joinMachine.mockRejectedValue(
      await responseError(400, 'Bad Request', {
        name: 'InputError',
        message: 'reason must be at least 10 characters',
      }),
    );
    renderPage(api);
    fireEvent.click(
      await screen.findByRole('button', { name: `Add ${SPARE_UUID}` }),
    );
    const dialog = await screen.findByRole('dialog');
    fireEvent.change(within(dialog).getByTestId('join-reason'), {
      target: { value: 'short' },
    });
    fireEvent.click(within(dialog).getByRole('button', { name: 'Add' }));
    expect(
      await within(dialog).findByText('reason must be at least 10 characters'),
    ).toBeInTheDocument();
  });

  it('adds a discovery address and shows a refusal', async () => {
    const api = fakeMachinesApi();
    renderPage(api);
    const address = await screen.findByTestId('discovery-address');
    fireEvent.change(address, { target: { value: '127.0.10.32' } });
    fireEvent.change(screen.getByTestId('discovery-reason'), {
      target: { value: 'new spare in rack 4' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Add address' }));
    await waitFor(() =>
      expect(api.addDiscoveryAddress).toHaveBeenCalledWith('rack', {
        address: '127.0.10.32',
        reason: 'new spare in rack 4',
      }),
    );
    expect(await screen.findByTestId('machines-notice')).toHaveTextContent(
      '127.0.10.32 added',
    );

    api.addDiscoveryAddress.mockRejectedValue(
      await responseError(409, 'Conflict', {
        name: 'ConflictError',
        message: '127.0.10.31 is already a discovery address of rack',
      }),
    );
    fireEvent.change(address, { target: { value: '127.0.10.31' } });
    fireEvent.change(screen.getByTestId('discovery-reason'), {
      target: { value: 'new spare in rack 4' },
    });
    fireEvent.click(screen.getByRole('button', { name: 'Add address' }));
    expect(await screen.findByTestId('discovery-error')).toHaveTextContent(
      '127.0.10.31 is already a discovery address of rack',
    );
  });

  it('without machines:add offers neither Add nor the address field', async () => {
    renderPage(fakeMachinesApi(), { deny: ['machines:add'] });
    await screen.findAllByTestId('machine-row');
    expect(screen.queryByRole('button', { name: /^Add / })).toBeNull();
    expect(screen.queryByTestId('discovery-address')).toBeNull();
  });

  it('without machines:read says so', async () => {
    const api = fakeMachinesApi();
    renderPage(api, { deny: ['machines:read'] });
    expect(
      await screen.findByText(
        'You are not allowed to see machines (machines:read).',
      ),
    ).toBeInTheDocument();
    expect(api.listMachines).not.toHaveBeenCalled();
  });

  it('says when the cluster has no TalosCluster', async () => {
    renderPage(
      fakeMachinesApi(machinesOfRack({ talosClusters: [], machines: [] })),
    );
    expect(
      await screen.findByText(/No TalosCluster in namespace rackside-system/),
    ).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Reset and add/ })).toBeNull();
  });

  it('lists the requests, follows a running one from its address, and refetches on the cluster signal', async () => {
    const signals = fakeSignals();
    const running = reclaim({ phase: 'WaitingForMaintenance' });
    const api = fakeMachinesApi(machinesOfRack(), [
      running,
      reclaim({
        name: 'reclaim-old',
        address: '127.0.10.41',
        phase: 'Refused',
        terminal: true,
        result: 'it is the last control plane of plant-old',
      }),
    ]);
    api.getReclaim.mockResolvedValue(running);
    renderPage(api, { signals });
    const rows = await screen.findAllByTestId('reclaim-row');
    expect(rows[1]).toHaveTextContent(
      'it is the last control plane of plant-old',
    );
    expect(api.listMachines).toHaveBeenCalledTimes(1);
    act(() => signals.deliver({ cluster: 'rack' }));
    await waitFor(() => expect(api.listMachines).toHaveBeenCalledTimes(2));

    fireEvent.click(
      within(discoveryRow('127.0.10.42')).getByRole('button', {
        name: 'Follow reclaim-abc-1234 (WaitingForMaintenance)',
      }),
    );
    expect(await screen.findByTestId('reclaim-phase')).toHaveTextContent(
      'Reset sent: waiting for the machine to come back in maintenance mode',
    );
  });
});
