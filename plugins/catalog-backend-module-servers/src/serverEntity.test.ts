import { resourceEntityV1alpha1Validator } from '@backstage/catalog-model';
import { serverEntity } from './serverEntity';

describe('serverEntity', () => {
  it('publishes a server as a Resource linked to its cluster and node', async () => {
    const entity = serverEntity(
      {
        cluster: 'plant-a',
        node: 'cp-1',
        controlPlane: true,
        virtual: false,
      },
      {
        owner: 'group:default/plant-engineers',
        locationKey: 'rackside:plant-a',
      },
    );
    await expect(resourceEntityV1alpha1Validator.check(entity)).resolves.toBe(
      true,
    );
    expect(entity.kind).toBe('Resource');
    expect(entity.metadata.name).toBe('plant-a--cp-1');
    expect(entity.metadata.annotations).toMatchObject({
      'rackside.dev/cluster': 'plant-a',
      'rackside.dev/node': 'cp-1',
    });
    expect(entity.metadata.labels).toEqual({
      'rackside.dev/role': 'control-plane',
    });
    expect(entity.spec).toEqual({
      type: 'server',
      owner: 'group:default/plant-engineers',
      system: 'plant-a',
    });
  });

  it('keeps entity names within the 63 character limit', () => {
    const entity = serverEntity(
      {
        cluster: 'c'.repeat(40),
        node: 'n'.repeat(40),
        controlPlane: false,
        virtual: true,
      },
      { owner: 'user:default/guest', locationKey: 'rackside:x' },
    );
    expect(entity.metadata.name.length).toBeLessThanOrEqual(63);
    expect(entity.metadata.labels?.['rackside.dev/virtual-node']).toBe('true');
  });
});
