import {
  FieldFormatEntityPolicy,
  resourceEntityV1alpha1Validator,
} from '@backstage/catalog-model';
import { rolesOf, serverEntity, serverEntityName } from './serverEntity';

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
        locationKey: 'rackside-servers:plant-a',
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

  it('keeps long names within 63 characters, valid and distinct', async () => {
    const a = serverEntityName('c'.repeat(40), `${'n'.repeat(30)}.a`);
    const b = serverEntityName('c'.repeat(40), `${'n'.repeat(30)}.b`);
    expect(a.length).toBeLessThanOrEqual(63);
    expect(a).not.toBe(b);
    const entity = serverEntity(
      {
        cluster: 'c'.repeat(40),
        node: `${'n'.repeat(20)}-${'m'.repeat(30)}`,
        controlPlane: false,
        virtual: true,
      },
      { owner: 'user:default/guest', locationKey: 'rackside-servers:x' },
    );
    await expect(new FieldFormatEntityPolicy().enforce(entity)).resolves.toBe(
      entity,
    );
    expect(entity.metadata.labels?.['rackside.dev/virtual-node']).toBe('true');
  });

  it('reads roles from node-role labels', () => {
    expect(
      rolesOf({
        'node-role.kubernetes.io/worker': '',
        'node-role.kubernetes.io/control-plane': '',
        'kubernetes.io/hostname': 'x',
      }),
    ).toEqual(['control-plane', 'worker']);
  });
});
