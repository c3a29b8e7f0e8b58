import type { Entity } from '@backstage/catalog-model';
import { EntityProvider } from '@backstage/plugin-catalog-react';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import type {
  ServerHealthDetail,
  ServerResponse,
} from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import {
  fakeServersApi,
  responseError,
  server,
  serverList,
} from '../../testing/fixtures';
import { EntityServerContent } from './EntityServerContent';
import { HardwareCard } from './HardwareCard';

const entity: Entity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Resource',
  metadata: {
    name: 'worker-1',
    annotations: {
      'rackside.dev/cluster': 'rack',
      'rackside.dev/node': 'worker-1',
    },
  },
  spec: { type: 'server', owner: 'group:default/plant-admins' },
};

const reading: ServerHealthDetail = {
  rollup: 'Critical',
  state: 'Enabled',
  readAt: new Date(Date.now() - 5 * 60_000).toISOString(),
  failedParts: 2,
  parts: [
    {
      kind: 'PowerSupply',
      name: 'PSU 1',
      health: 'Critical',
      state: 'Enabled',
      message: 'input lost',
    },
    { kind: 'Fan', name: 'Fan 3', health: 'Warning' },
  ],
  logEntries: [
    {
      id: '41',
      created: '2026-12-06T09:58:00Z',
      severity: 'Critical',
      message: 'Power supply 1 input lost',
      service: 'System',
    },
  ],
  firmware: [
    { name: 'BIOS', version: '2.19.1', updateable: true },
    { name: 'CPLD', version: '1.0.4', updateable: false },
  ],
  missing: ['Storage'],
};

function renderFor(api: ReturnType<typeof fakeServersApi>) {
  return renderInTestApp(
    <TestApiProvider apis={[[serversApiRef, api]]}>
      <EntityProvider entity={entity}>
        <EntityServerContent />
      </EntityProvider>
    </TestApiProvider>,
  );
}

/**
 * The card itself, as the tab hands it its server: on screen once rendered, so what a
 * test asks of it waits on no loading (the tab's own requests are the two tests above
 * it that render the tab).
 */
function renderCard(
  shown: ServerResponse,
  api = fakeServersApi(serverList([shown])),
) {
  return renderInTestApp(
    <TestApiProvider apis={[[serversApiRef, api]]}>
      <HardwareCard server={shown} reload={() => {}} />
    </TestApiProvider>,
  );
}

describe('the Server tab’s Hardware card', () => {
  it('shows the rollup and its age, the failed parts, the event log, the firmware and what the BMC lacks', async () => {
    renderFor(
      fakeServersApi(serverList([server('worker-1', { health: reading })])),
    );
    const card = await screen.findByTestId('entity-server-hardware');
    expect(within(card).getByTestId('hardware-rollup')).toHaveTextContent(
      'Critical',
    );
    expect(card).toHaveTextContent('read 5 min ago');
    const parts = within(card).getByRole('table', { name: 'Failed parts' });
    expect(parts).toHaveTextContent('PSU 1');
    expect(parts).toHaveTextContent('input lost');
    expect(parts).toHaveTextContent('Fan 3');
    const log = within(card).getByRole('table', { name: 'Event log' });
    expect(log).toHaveTextContent('Power supply 1 input lost');
    const firmware = within(card).getByRole('table', { name: 'Firmware' });
    expect(within(firmware).getAllByRole('row')).toHaveLength(3);
    expect(firmware).toHaveTextContent('2.19.1');
    expect(card).toHaveTextContent('This BMC does not offer: Storage.');
  });

  it('shows the firmware updates of the BMC, newest first', async () => {
    const bios = '/redfish/v1/UpdateService/FirmwareInventory/BIOS';
    await renderCard(
      server('worker-1', {
        health: {
          ...reading,
          firmwareHistory: [
            {
              at: '2026-12-01T10:00:00Z',
              maintenance: 'bios-2-18',
              uid: 'u-1',
              imageURI: 'https://firmware.plant.example/bios-2.18.0.bin',
              result: 'Failed',
              components: [{ id: bios, before: '2.17.0', after: '2.17.0' }],
            },
            {
              at: '2026-12-05T10:00:00Z',
              maintenance: 'bios-2-19',
              uid: 'u-2',
              imageURI: 'https://firmware.plant.example/bios-2.19.1.bin',
              result: 'Complete',
              components: [{ id: bios, before: '2.17.0', after: '2.19.1' }],
            },
          ],
        },
      }),
    );
    const card = screen.getByTestId('entity-server-hardware');
    const history = within(card).getByRole('table', {
      name: 'Firmware updates',
    });
    const rows = within(history).getAllByRole('row');
    expect(rows).toHaveLength(3);
    expect(rows[1]).toHaveTextContent('bios-2-19');
    expect(rows[1]).toHaveTextContent('Complete');
    expect(rows[1]).toHaveTextContent('BIOS 2.17.0 → 2.19.1');
    expect(rows[2]).toHaveTextContent('Failed');
  });

  it('has no firmware updates table without a history', async () => {
    await renderCard(server('worker-1', { health: reading }));
    const card = screen.getByTestId('entity-server-hardware');
    expect(
      within(card).queryByRole('table', { name: 'Firmware updates' }),
    ).toBeNull();
  });

  it('says how many older log entries a long log left unread', async () => {
    await renderCard(
      server('worker-1', { health: { ...reading, logEntriesSkipped: 480 } }),
    );
    const card = screen.getByTestId('entity-server-hardware');
    expect(card).toHaveTextContent(
      '480 older entries were not read: the log is longer than a reading goes through.',
    );
    expect(
      within(card).getByRole('table', { name: 'Event log' }),
    ).toHaveTextContent('Power supply 1 input lost');
  });

  it('says so when there is no reading', async () => {
    await renderCard(server('worker-1'));
    const card = screen.getByTestId('entity-server-hardware');
    expect(card).toHaveTextContent('No reading from this server');
  });

  it('shows a failed reading’s error beside the last parts', async () => {
    await renderCard(
      server('worker-1', {
        health: { ...reading, error: 'the BMC answered 503' },
      }),
    );
    const card = screen.getByTestId('entity-server-hardware');
    expect(card).toHaveTextContent(
      'The last reading failed: the BMC answered 503',
    );
  });

  it('says when a reading is too old to count, and what that asks of a return to service', async () => {
    await renderCard(
      server('worker-1', {
        health: {
          ...reading,
          rollup: 'OK',
          parts: [],
          failedParts: 0,
          readAt: new Date(Date.now() - 3 * 3600_000 - 5_000).toISOString(),
          sweepIntervalSeconds: 900,
        },
      }),
    );
    const card = screen.getByTestId('entity-server-hardware');
    expect(within(card).getByTestId('hardware-unknown')).toHaveTextContent(
      'hardware state unknown: last reading 3 h ago (the sweep reads every 15 min): returning this server to service asks for its name typed out.',
    );
  });

  it('says nothing of the kind for a fresh reading', async () => {
    await renderCard(server('worker-1', { health: reading }));
    const card = screen.getByTestId('entity-server-hardware');
    expect(within(card).queryByTestId('hardware-unknown')).toBeNull();
  });

  it('Refresh asks the backend, says the reading was requested, and reads the server again until answered', async () => {
    const api = fakeServersApi(serverList([]));
    const reload = jest.fn();
    const base = server('worker-1', { cluster: 'rack', health: reading });
    const { rerender } = await renderInTestApp(
      <TestApiProvider apis={[[serversApiRef, api]]}>
        <HardwareCard server={base} reload={reload} answerCheckMs={20} />
      </TestApiProvider>,
    );
    const card = screen.getByTestId('entity-server-hardware');
    fireEvent.click(within(card).getByRole('button', { name: 'Refresh' }));
    await waitFor(() =>
      expect(api.requestHealthRefresh).toHaveBeenCalledWith('rack', 'worker-1'),
    );
    expect(await within(card).findByRole('alert')).toHaveTextContent(
      'Reading requested at',
    );
    // Not answered yet: the card reads the server again.
    await waitFor(() => expect(reload).toHaveBeenCalled());
    // The operator's answer arrives: no more reads.
    const { requestedAt } = await api.requestHealthRefresh.mock.results[0]
      .value;
    rerender(
      <TestApiProvider apis={[[serversApiRef, api]]}>
        <HardwareCard
          server={{
            ...base,
            health: { ...reading, answeredRequestAt: requestedAt },
          }}
          reload={reload}
          answerCheckMs={20}
        />
      </TestApiProvider>,
    );
    await within(card).findByText(
      'This reading answers the refresh you requested.',
      { exact: false },
    );
    const reads = reload.mock.calls.length;
    await new Promise(resolve => setTimeout(resolve, 100));
    expect(reload.mock.calls.length).toBe(reads);
  });

  it('shows the 429’s message when a reading was requested less than a minute ago', async () => {
    const shown = server('worker-1', { health: reading });
    const api = fakeServersApi(serverList([shown]));
    api.requestHealthRefresh.mockRejectedValue(
      await responseError(429, 'Too Many Requests', {
        name: 'HealthRefreshTooSoonError',
        message:
          'a health reading of this server was requested at 2026-12-06T10:00:00.000Z; ask again after 2026-12-06T10:01:00.000Z (in 42 s)',
      }),
    );
    await renderCard(shown, api);
    const card = screen.getByTestId('entity-server-hardware');
    fireEvent.click(within(card).getByRole('button', { name: 'Refresh' }));
    expect(await within(card).findByRole('alert')).toHaveTextContent(
      'ask again after 2026-12-06T10:01:00.000Z (in 42 s)',
    );
  });
});
