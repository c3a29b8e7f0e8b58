import type { Entity } from '@backstage/catalog-model';
import { EntityProvider } from '@backstage/plugin-catalog-react';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { fireEvent, screen, within } from '@testing-library/react';
import { serversApiRef } from '../../api';
import { fakeServersApi, OK, server, serverList } from '../../testing/fixtures';
import { EntityServerContent } from './EntityServerContent';
import { isServerEntity } from './annotations';
import { findEntityServer } from './useEntityServer';

const chassis = (annotations: Record<string, string>): Entity => ({
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Resource',
  metadata: { name: 'hall-1-rack-3-u12', annotations },
  spec: { type: 'chassis', owner: 'group:default/plant-admins' },
});

function renderFor(entity: Entity, api: ReturnType<typeof fakeServersApi>) {
  return renderInTestApp(
    <TestApiProvider apis={[[serversApiRef, api]]}>
      <EntityProvider entity={entity}>
        <EntityServerContent />
      </EntityProvider>
    </TestApiProvider>,
  );
}

describe('EntityServerContent', () => {
  it('knows which entities have the tab', () => {
    expect(isServerEntity(chassis({ 'rackside.dev/node': 'worker-2' }))).toBe(
      true,
    );
    expect(isServerEntity(chassis({ 'rackside.dev/node': ' ' }))).toBe(false);
    expect(isServerEntity(chassis({ 'rackside.dev/cluster': 'rack' }))).toBe(
      false,
    );
  });

  it('shows the server’s state, its maintenance and the actions the user may request', async () => {
    const api = fakeServersApi(
      serverList([
        server('worker-1'),
        server(
          'worker-2',
          {
            unschedulable: true,
            systemUUID: 'uuid-2',
            maintenance: {
              name: 'worker-2-cordon-abc',
              nodeName: 'worker-2',
              intent: 'cordon',
              reason: 'replace the failed disk in bay 3',
              requestedBy: 'user:default/engineer',
              phase: 'Cordoned',
              terminal: false,
              conditions: [],
              history: [],
            },
          },
          {
            uncordon: OK,
            'maintenance-abandon': OK,
            drain: { offered: true, allowed: false },
          },
        ),
      ]),
    );
    await renderFor(
      chassis({
        'rackside.dev/cluster': 'rack',
        'rackside.dev/node': 'worker-2',
      }),
      api,
    );

    const state = await screen.findByTestId('entity-server-state');
    expect(within(state).getByText('worker-2')).toBeInTheDocument();
    expect(within(state).getByText('Rack')).toBeInTheDocument();
    expect(within(state).getByText('Cordoned')).toBeInTheDocument();
    expect(within(state).getByText('uuid-2')).toBeInTheDocument();

    const maintenance = screen.getByTestId('entity-server-maintenance');
    expect(
      within(maintenance).getByText('Cordoned', { exact: false }),
    ).toBeInTheDocument();
    expect(
      within(maintenance).getByText('Reason: replace the failed disk in bay 3'),
    ).toBeInTheDocument();
    expect(
      within(maintenance).getByText(/Requested by user:default\/engineer/),
    ).toBeInTheDocument();

    const actions = screen.getByTestId('entity-server-actions');
    expect(
      within(actions)
        .getAllByRole('listitem')
        .map(i => i.textContent),
    ).toEqual(['Return to service', 'Abandon maintenance']);
    expect(
      within(actions).getByText(/not permitted for you: Drain/),
    ).toBeInTheDocument();
    expect(
      within(actions).getByRole('link', { name: 'Open in Servers' }),
    ).toHaveAttribute('href', '/servers');
    expect(api.getServer).toHaveBeenCalledWith('rack', 'worker-2');
    expect(api.listServers).not.toHaveBeenCalled();
  });

  it('says so when the annotated server does not exist, and retries', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    await renderFor(
      chassis({
        'rackside.dev/cluster': 'rack',
        'rackside.dev/node': 'worker-9',
      }),
      api,
    );
    expect(
      await screen.findByText('No server "worker-9" in cluster rack.'),
    ).toBeInTheDocument();
    fireEvent.click(screen.getByRole('button', { name: 'Retry' }));
    expect(
      await screen.findByText('No server "worker-9" in cluster rack.'),
    ).toBeInTheDocument();
    expect(api.getServer).toHaveBeenCalledTimes(2);
  });
});

describe('findEntityServer', () => {
  const cluster = (name: string) =>
    ({ name, title: name.toUpperCase() } as any);
  const apis = {
    a: fakeServersApi(serverList([server('cp-1'), server('w-1')])),
    b: fakeServersApi(serverList([server('w-1')])),
  };
  const api = {
    listClusters: async () => [cluster('a'), cluster('b')],
    getServer: (name: string, node: string) =>
      apis[name as 'a' | 'b'].getServer(name, node),
  };

  it('finds a node without a cluster annotation when only one cluster has it', async () => {
    const found = await findEntityServer(api, { node: 'cp-1' });
    expect(found.cluster.name).toBe('a');
  });

  it('asks for the cluster annotation when the node name repeats', async () => {
    await expect(findEntityServer(api, { node: 'w-1' })).rejects.toThrow(
      'Server "w-1" exists in a, b; add the rackside.dev/cluster annotation to choose one.',
    );
  });

  it('names an unknown cluster', async () => {
    await expect(
      findEntityServer(api, { cluster: 'c', node: 'w-1' }),
    ).rejects.toThrow(
      'No cluster named "c" is configured in Rackside (servers.clusters).',
    );
  });
});
