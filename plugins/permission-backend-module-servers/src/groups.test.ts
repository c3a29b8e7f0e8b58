import { mockServices } from '@backstage/backend-test-utils';
import type { Entity } from '@backstage/catalog-model';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import { CatalogGroupResolver } from './groups';

function user(name: string, memberOf: string[]): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'User',
    metadata: { name, namespace: 'default' },
    spec: { memberOf },
    relations: memberOf.map(g => ({ type: 'memberOf', targetRef: g })),
  };
}

function group(name: string, parent?: string): Entity {
  return {
    apiVersion: 'backstage.io/v1alpha1',
    kind: 'Group',
    metadata: { name, namespace: 'default' },
    spec: { type: 'team', children: [] },
    relations: parent ? [{ type: 'childOf', targetRef: parent }] : [],
  };
}

const entities = [
  user('ada', ['group:default/hall-1']),
  group('hall-1', 'group:default/plant'),
  group('plant', 'group:default/loop-a'),
  group('loop-a', 'group:default/plant'), // a cycle must not loop forever
  user('solo', []),
];

function resolver(catalog = catalogServiceMock({ entities }), now = () => 0) {
  return new CatalogGroupResolver({
    catalog,
    auth: mockServices.auth(),
    logger: mockServices.logger.mock(),
    cacheSeconds: 30,
    now,
  });
}

describe('CatalogGroupResolver', () => {
  it('finds direct groups and their parents', async () => {
    expect((await resolver().groupsOf('user:default/ada')).sort()).toEqual([
      'group:default/hall-1',
      'group:default/loop-a',
      'group:default/plant',
    ]);
    expect(await resolver().groupsOf('user:default/solo')).toEqual([]);
    expect(await resolver().groupsOf('user:default/unknown')).toEqual([]);
  });

  it('reuses an answer within cacheSeconds and asks again after', async () => {
    const catalog = catalogServiceMock({ entities });
    const spy = jest.spyOn(catalog, 'getEntityByRef');
    let time = 0;
    const groups = resolver(catalog, () => time);
    await groups.groupsOf('user:default/ada');
    time = 29_000;
    await groups.groupsOf('User:default/Ada');
    expect(spy).toHaveBeenCalledTimes(1);
    time = 31_000;
    await groups.groupsOf('user:default/ada');
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('asks again about a user the catalog does not know yet', async () => {
    const catalog = catalogServiceMock({ entities });
    const spy = jest.spyOn(catalog, 'getEntityByRef');
    const groups = resolver(catalog);
    expect(await groups.groupsOf('user:default/newcomer')).toEqual([]);
    expect(await groups.groupsOf('user:default/newcomer')).toEqual([]);
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('fails, naming the user, when the catalog fails, and does not keep that answer', async () => {
    const catalog = catalogServiceMock({ entities });
    const spy = jest
      .spyOn(catalog, 'getEntityByRef')
      .mockRejectedValueOnce(new Error('catalog down'));
    const groups = resolver(catalog);
    // "No groups" would drop the user's group deny lines: the policy must know.
    await expect(groups.groupsOf('user:default/ada')).rejects.toThrow(
      /could not read the groups of user:default\/ada from the catalog: Error: catalog down/,
    );
    expect(await groups.groupsOf('user:default/ada')).toContain(
      'group:default/hall-1',
    );
    expect(spy).toHaveBeenCalledTimes(2);
  });

  it('fails when the catalog does not answer in time', async () => {
    const catalog = catalogServiceMock({ entities });
    let answer!: (entity: Entity | undefined) => void;
    jest
      .spyOn(catalog, 'getEntityByRef')
      .mockImplementationOnce(
        () => new Promise<Entity | undefined>(r => (answer = r)),
      );
    const groups = new CatalogGroupResolver({
      catalog,
      auth: mockServices.auth(),
      logger: mockServices.logger.mock(),
      cacheSeconds: 30,
      timeoutMs: 20,
    });
    await expect(groups.groupsOf('user:default/ada')).rejects.toThrow(
      /did not answer within 20 ms/,
    );
    // A late answer is not kept in place of the failure.
    answer(user('ada', ['group:default/late']));
    expect(await groups.groupsOf('user:default/ada')).toContain(
      'group:default/hall-1',
    );
  });
});
