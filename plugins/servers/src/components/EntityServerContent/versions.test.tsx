/*
 * The Server tab's versions (issue 47): the Talos version its Node reports, and the BIOS
 * and BMC firmware of the BMC's last reading.
 */
import type { Entity } from '@backstage/catalog-model';
import { EntityProvider } from '@backstage/plugin-catalog-react';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { screen, within } from '@testing-library/react';
import type { ServerHealthDetail } from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import { fakeServersApi, server, serverList } from '../../testing/fixtures';
import { EntityServerContent } from './EntityServerContent';

const chassis: Entity = {
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Resource',
  metadata: {
    name: 'hall-1-rack-3-u12',
    annotations: {
      'rackside.dev/cluster': 'rack',
      'rackside.dev/node': 'worker-2',
    },
  },
  spec: { type: 'chassis', owner: 'group:default/plant-admins' },
};

function reading(firmware: ServerHealthDetail['firmware']): ServerHealthDetail {
  return {
    rollup: 'OK',
    readAt: new Date().toISOString(),
    failedParts: 0,
    parts: [],
    logEntries: [],
    firmware,
    missing: [],
  };
}

async function renderTab(overrides: Parameters<typeof server>[1]) {
  const api = fakeServersApi(serverList([server('worker-2', overrides)]));
  await renderInTestApp(
    <TestApiProvider apis={[[serversApiRef, api]]}>
      <EntityProvider entity={chassis}>
        <EntityServerContent />
      </EntityProvider>
    </TestApiProvider>,
  );
  return screen.findByTestId('entity-server-state');
}

describe('the Server tab’s versions', () => {
  it('shows the Talos version and the BIOS and BMC firmware of the last reading', async () => {
    const state = await renderTab({
      talosVersion: 'v1.11.3',
      health: reading([
        { name: 'BIOS', version: '2.19.1', updateable: true },
        { name: 'BMC', version: '7.10', updateable: true },
        { name: 'NIC 1', version: '22.1', updateable: false },
      ]),
    });
    expect(within(state).getByTestId('entity-server-talos')).toHaveTextContent(
      'Talosv1.11.3',
    );
    expect(within(state).getByTestId('entity-server-bios')).toHaveTextContent(
      'BIOS2.19.1',
    );
    expect(within(state).getByTestId('entity-server-bmc')).toHaveTextContent(
      'BMC firmware7.10',
    );
    // The whole inventory stays on the Hardware card.
    const firmware = screen.getByRole('table', { name: 'Firmware' });
    expect(within(firmware).getByText('22.1')).toBeInTheDocument();
  });

  it('says nothing of firmware without a reading, and a dash without a Talos version', async () => {
    const state = await renderTab({});
    expect(within(state).getByTestId('entity-server-talos')).toHaveTextContent(
      'Talos—',
    );
    expect(within(state).queryByTestId('entity-server-bios')).toBeNull();
    expect(within(state).queryByTestId('entity-server-bmc')).toBeNull();
  });
});
