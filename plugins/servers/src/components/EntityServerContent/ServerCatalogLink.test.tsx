import { catalogApiRef, entityRouteRef } from '@backstage/plugin-catalog-react';
import { catalogApiMock } from '@backstage/plugin-catalog-react/testUtils';
import { renderInTestApp, TestApiProvider } from '@backstage/test-utils';
import { screen } from '@testing-library/react';
import { ServerCatalogLink, serverEntityRefs } from './ServerCatalogLink';

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

  it('asks the catalog once per cluster while its answer is fresh', async () => {
    const catalogApi = { getEntities: jest.fn(async () => ({ items: [] })) };
    await serverEntityRefs(catalogApi, 'plant-q', 0);
    await serverEntityRefs(catalogApi, 'plant-q', 29_000);
    expect(catalogApi.getEntities).toHaveBeenCalledTimes(1);
    await serverEntityRefs(catalogApi, 'plant-q', 31_000);
    expect(catalogApi.getEntities).toHaveBeenCalledTimes(2);
    expect(catalogApi.getEntities).toHaveBeenCalledWith(
      expect.objectContaining({
        filter: { 'metadata.annotations.rackside.dev/cluster': 'plant-q' },
      }),
    );
  });
});
