import { mockServices } from '@backstage/backend-test-utils';
import {
  DefaultNamespaceEntityPolicy,
  EntityPolicies,
  FieldFormatEntityPolicy,
  NoForeignRootFieldsEntityPolicy,
  resourceEntityV1alpha1Validator,
  SchemaValidEntityPolicy,
  systemEntityV1alpha1Validator,
  type Entity,
} from '@backstage/catalog-model';
import type {
  EntityProviderConnection,
  EntityProviderMutation,
} from '@backstage/plugin-catalog-node';
import type { NodeObject } from '@rackside/plugin-servers-node';
import { ServersEntityProvider, type NodeCache } from './ServersEntityProvider';

class FakeNodeCache implements NodeCache {
  nodes: NodeObject[] = [];
  private listeners = new Set<(keys: ReadonlySet<string>) => void>();
  private isSynced = false;
  private resolve!: () => void;
  readonly synced = new Promise<void>(r => {
    this.resolve = r;
  });
  stopped = false;

  list = () => this.nodes;
  hasSynced = () => this.isSynced;
  on(_event: any, listener: any) {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  async stop() {
    this.stopped = true;
  }
  sync(nodes: NodeObject[]) {
    this.nodes = nodes;
    this.isSynced = true;
    this.resolve();
  }
  change(nodes: NodeObject[]) {
    this.nodes = nodes;
    this.listeners.forEach(l => l(new Set()));
  }
}

function node(
  name: string,
  labels: Record<string, string> = {},
  heartbeat = '1',
): NodeObject {
  return {
    metadata: { name, labels, resourceVersion: heartbeat },
    status: {
      nodeInfo: { systemUUID: `uuid-${name}` } as any,
      conditions: [
        { type: 'Ready', status: 'True', lastHeartbeatTime: heartbeat } as any,
      ],
    },
  } as NodeObject;
}

const CP = { 'node-role.kubernetes.io/control-plane': '' };

function setup(options: { includeSystemUUID?: boolean } = {}) {
  const caches = {
    'plant-a': new FakeNodeCache(),
    'plant-b': new FakeNodeCache(),
  };
  const mutations: EntityProviderMutation[] = [];
  const connection: EntityProviderConnection = {
    applyMutation: async m => {
      mutations.push(m);
    },
    refresh: async () => {},
  };
  let scheduled: (() => Promise<void>) | undefined;
  const provider = new ServersEntityProvider({
    clusters: [
      { name: 'plant-a', title: 'Plant A' },
      { name: 'plant-b', title: 'Plant B' },
    ],
    owner: 'group:default/plant-admins',
    logger: mockServices.logger.mock(),
    taskRunner: {
      run: async task => {
        scheduled = task.fn as () => Promise<void>;
      },
    },
    createNodeCache: cluster => caches[cluster.name as keyof typeof caches],
    ...options,
  });
  const settle = () => new Promise(r => setTimeout(r, 0));
  return {
    provider,
    caches,
    mutations,
    connection,
    settle,
    full: () => scheduled!(),
  };
}

const names = (entities: Array<{ entity: Entity }>) =>
  entities.map(e => `${e.entity.kind}:${e.entity.metadata.name}`).sort();

const policies = EntityPolicies.allOf([
  new DefaultNamespaceEntityPolicy(),
  new NoForeignRootFieldsEntityPolicy(),
  new FieldFormatEntityPolicy(),
  new SchemaValidEntityPolicy(),
]);

describe('ServersEntityProvider', () => {
  it('publishes a cluster as a delta once listed, and entities the catalog model accepts', async () => {
    const { provider, caches, mutations, connection, settle } = setup({
      includeSystemUUID: true,
    });
    await provider.connect(connection);
    caches['plant-a'].sync([
      node('cp-1', { ...CP, 'node-role.kubernetes.io/etcd': '' }),
      node('worker-1'),
      node('virt-1', { 'rackside.dev/virtual-node': 'true' }),
    ]);
    await settle();
    expect(mutations).toHaveLength(1);
    const [delta] = mutations;
    if (delta.type !== 'delta') throw new Error('expected a delta');
    expect(delta.removed).toEqual([]);
    expect(names(delta.added)).toEqual([
      'Resource:plant-a--cp-1',
      'Resource:plant-a--virt-1',
      'Resource:plant-a--worker-1',
      'System:plant-a',
    ]);
    for (const { entity, locationKey } of delta.added) {
      expect(locationKey).toBe('rackside-servers:plant-a');
      await expect(policies.enforce(entity)).resolves.toMatchObject(entity);
      const validator =
        entity.kind === 'System'
          ? systemEntityV1alpha1Validator
          : resourceEntityV1alpha1Validator;
      await expect(validator.check(entity)).resolves.toBe(true);
    }
    const cp = delta.added.find(
      e => e.entity.metadata.name === 'plant-a--cp-1',
    )!.entity;
    expect(cp.metadata.annotations).toMatchObject({
      'rackside.dev/cluster': 'plant-a',
      'rackside.dev/node': 'cp-1',
      'rackside.dev/system-uuid': 'uuid-cp-1',
    });
    expect(cp.metadata.labels).toEqual({
      'rackside.dev/role': 'control-plane',
      'rackside.dev/role-control-plane': 'true',
      'rackside.dev/role-etcd': 'true',
    });
    expect(cp.spec).toEqual({
      type: 'server',
      owner: 'group:default/plant-admins',
      system: 'plant-a',
    });
    const virt = delta.added.find(
      e => e.entity.metadata.name === 'plant-a--virt-1',
    )!.entity;
    expect(virt.metadata.labels?.['rackside.dev/virtual-node']).toBe('true');
  });

  it('publishes no system UUID unless includeSystemUUID is set', async () => {
    const { provider, caches, mutations, connection, settle } = setup();
    await provider.connect(connection);
    caches['plant-a'].sync([node('cp-1', CP), node('worker-1')]);
    await settle();
    const [delta] = mutations;
    if (delta.type !== 'delta') throw new Error('expected a delta');
    const servers = delta.added.filter(e => e.entity.kind === 'Resource');
    expect(servers).toHaveLength(2);
    for (const { entity } of servers) {
      expect(entity.metadata.annotations).toMatchObject({
        'rackside.dev/node': expect.any(String),
      });
      expect(JSON.stringify(entity)).not.toContain('uuid-');
    }
  });

  it('publishes changed and removed servers as deltas, and nothing for heartbeats', async () => {
    const { provider, caches, mutations, connection, settle } = setup();
    await provider.connect(connection);
    caches['plant-a'].sync([node('worker-1'), node('worker-2')]);
    await settle();
    mutations.length = 0;

    caches['plant-a'].change([
      node('worker-1', {}, '2'),
      node('worker-2', {}, '2'),
    ]);
    await settle();
    expect(mutations).toEqual([]);

    caches['plant-a'].change([
      node('worker-1', CP, '3'),
      node('worker-3', {}, '3'),
    ]);
    await settle();
    expect(mutations).toHaveLength(1);
    const [delta] = mutations as Array<
      Extract<EntityProviderMutation, { type: 'delta' }>
    >;
    expect(names(delta.added)).toEqual([
      'Resource:plant-a--worker-1',
      'Resource:plant-a--worker-3',
    ]);
    expect(delta.removed).toEqual([
      {
        entityRef: 'resource:default/plant-a--worker-2',
        locationKey: 'rackside-servers:plant-a',
      },
    ]);
  });

  it('runs the full refresh on its schedule only once every cluster is listed', async () => {
    const { provider, caches, mutations, connection, settle, full } = setup();
    await provider.connect(connection);
    caches['plant-a'].sync([node('worker-1')]);
    await settle();
    mutations.length = 0;

    await full();
    expect(mutations).toEqual([]); // plant-b has not answered yet

    caches['plant-b'].sync([node('worker-1')]);
    await settle();
    mutations.length = 0;
    await full();
    expect(mutations).toHaveLength(1);
    const [mutation] = mutations;
    if (mutation.type !== 'full') throw new Error('expected a full mutation');
    expect(names(mutation.entities)).toEqual([
      'Resource:plant-a--worker-1',
      'Resource:plant-b--worker-1',
      'System:plant-a',
      'System:plant-b',
    ]);
  });

  it('stops its watches', async () => {
    const { provider, caches, connection } = setup();
    await provider.connect(connection);
    await provider.stop();
    expect(caches['plant-a'].stopped && caches['plant-b'].stopped).toBe(true);
  });
});
