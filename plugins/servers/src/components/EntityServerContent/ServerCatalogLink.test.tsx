import { catalogApiRef, entityRouteRef } from '@backstage/plugin-catalog-react';
import { catalogApiMock } from '@backstage/plugin-catalog-react/testUtils';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { screen } from '@testing-library/react';
import {
  NODES_PER_QUERY,
  ServerCatalogLink,
  serverEntityRef,
} from './ServerCatalogLink';

const resource = (
  name: string,
  type: string,
  cluster: string,
  node: string,
) => ({
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'Resource',
  metadata: {
    name,
    namespace: 'default',
    annotations: { 'rackside.dev/cluster': cluster, 'rackside.dev/node': node },
  },
  spec: { type, owner: 'group:default/plant-admins' },
});

describe('ServerCatalogLink', () => {
  it('links a row to the provider’s server entity, preferred over a chassis', async () => {
    const catalogApi = catalogApiMock({
      entities: [
        resource('plant-x--worker-2', 'server', 'plant-x', 'worker-2'),
        resource('hall-1-rack-3-u12', 'chassis', 'plant-x', 'worker-2'),
        resource('plant-y--worker-2', 'server', 'plant-y', 'worker-2'),
      ],
    });
    await renderInTestApp(
      <TestApiProvider apis={[[catalogApiRef, catalogApi]]}>
        <ServerCatalogLink cluster="plant-x" node="worker-2" />
      </TestApiProvider>,
      { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
    );
    expect(
      await screen.findByRole('link', { name: 'catalog entity of worker-2' }),
    ).toHaveAttribute('href', '/catalog/default/resource/plant-x--worker-2');
  });

  it('renders nothing without a catalog or without an entity', async () => {
    const { container } = await renderInTestApp(
      <ServerCatalogLink cluster="plant-z" node="worker-1" />,
    );
    expect(container.querySelector('a')).toBeNull();
    const catalogApi = catalogApiMock({ entities: [] });
    await renderInTestApp(
      <TestApiProvider apis={[[catalogApiRef, catalogApi]]}>
        <ServerCatalogLink cluster="plant-w" node="worker-1" />
      </TestApiProvider>,
    );
    await new Promise(r => setTimeout(r, 10));
    expect(screen.queryByTestId('server-catalog-link')).toBeNull();
  });

  it('asks the catalog once for the rows drawn together, for just their nodes', async () => {
    const catalogApi = {
      getEntities: jest.fn(async () => ({
        items: [resource('plant-r--worker-2', 'server', 'plant-r', 'worker-2')],
      })),
    };
    await renderInTestApp(
      <TestApiProvider apis={[[catalogApiRef, catalogApi]]}>
        {['worker-1', 'worker-2', 'worker-3'].map(node => (
          <ServerCatalogLink key={node} cluster="plant-r" node={node} />
        ))}
      </TestApiProvider>,
      { mountedRoutes: { '/catalog/:namespace/:kind/:name': entityRouteRef } },
    );
    expect(
      await screen.findByRole('link', { name: 'catalog entity of worker-2' }),
    ).toHaveAttribute('href', '/catalog/default/resource/plant-r--worker-2');
    expect(screen.getAllByTestId('server-catalog-link')).toHaveLength(1);
    expect(catalogApi.getEntities).toHaveBeenCalledTimes(1);
    expect(catalogApi.getEntities).toHaveBeenCalledWith(
      expect.objectContaining({
        filter: {
          'metadata.annotations.rackside.dev/cluster': 'plant-r',
          'metadata.annotations.rackside.dev/node': [
            'worker-1',
            'worker-2',
            'worker-3',
          ],
        },
      }),
    );
  });

  it('splits a large batch into queries of at most NODES_PER_QUERY nodes', async () => {
    const catalogApi = { getEntities: jest.fn(async () => ({ items: [] })) };
    const nodes = Array.from(
      { length: NODES_PER_QUERY + 1 },
      (_, i) => `node-${i}`,
    );
    await Promise.all(
      nodes.map(n => serverEntityRef(catalogApi, 'plant-s', n, 0)),
    );
    const asked = catalogApi.getEntities.mock.calls.map(
      ([q]: any[]) => q.filter['metadata.annotations.rackside.dev/node'],
    );
    expect(asked.map((a: string[]) => a.length)).toEqual([NODES_PER_QUERY, 1]);
    expect(asked.flat()).toEqual(nodes);
  });

  it('reuses a node’s answer while it is fresh, and asks again after a failure', async () => {
    const catalogApi = {
      getEntities: jest
        .fn()
        .mockRejectedValueOnce(new Error('catalog down'))
        .mockResolvedValue({ items: [] }),
    };
    await expect(
      serverEntityRef(catalogApi, 'plant-q', 'w-1', 0),
    ).rejects.toThrow('catalog down');
    await serverEntityRef(catalogApi, 'plant-q', 'w-1', 1_000);
    await serverEntityRef(catalogApi, 'plant-q', 'w-1', 29_000);
    expect(catalogApi.getEntities).toHaveBeenCalledTimes(2);
    await serverEntityRef(catalogApi, 'plant-q', 'w-1', 32_000);
    expect(catalogApi.getEntities).toHaveBeenCalledTimes(3);
  });
});
