/*
 * The service under the permission decorator answers nothing it was not granted: called
 * directly (a new caller wired around AuthorizedServersService by mistake), every read
 * and every action request is refused and nothing is written.
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { NotAllowedError } from '@backstage/errors';
import { staticClusterRegistry } from '../cluster/clusterRegistry';
import { FakeCluster, fakeNode } from '../testing/fakeCluster';
import { DefaultServersService } from './DefaultServersService';
import { PreflightTokens } from '../preflight/tokens';

function service() {
  const cluster = new FakeCluster('plant-a', [fakeNode('worker-1')]);
  const servers = new DefaultServersService({
    clusters: staticClusterRegistry([cluster]),
    logger: mockServices.logger.mock(),
    reasonPolicy: { minLength: 0, maxLength: 500 },
    preflightTokens: new PreflightTokens('test'),
  });
  return { cluster, servers };
}

describe('DefaultServersService without a grant', () => {
  const user = mockCredentials.user();

  it('refuses every read', async () => {
    const { servers } = service();
    await expect(servers.listClusters(user)).rejects.toThrow(NotAllowedError);
    await expect(servers.getUpgradeSources(user)).rejects.toThrow(
      NotAllowedError,
    );
    await expect(servers.listServers(user, 'plant-a')).rejects.toThrow(
      NotAllowedError,
    );
    await expect(
      servers.getServer(user, 'plant-a', 'worker-1'),
    ).rejects.toThrow(NotAllowedError);
    await expect(servers.listMaintenances(user, 'plant-a')).rejects.toThrow(
      NotAllowedError,
    );
    await expect(
      servers.preflight(user, {
        cluster: 'plant-a',
        node: 'worker-1',
        action: 'drain',
        options: {
          deleteEmptyDirData: false,
          force: false,
          allowNodeLocalData: false,
        },
      }),
    ).rejects.toThrow(NotAllowedError);
  });

  it('refuses an action request and writes nothing', async () => {
    const { cluster, servers } = service();
    await expect(
      servers.requestAction(user, {
        cluster: 'plant-a',
        node: 'worker-1',
        action: 'cordon',
        body: { reason: 'replace the failed disk in bay 3' },
      }),
    ).rejects.toThrow(/no permission decision was made/);
    expect(cluster.created).toEqual([]);
  });

  it('refuses a health refresh request and writes nothing', async () => {
    const { cluster, servers } = service();
    cluster.bmcNodes = ['worker-1'];
    await expect(
      servers.requestHealthRefresh(user, 'plant-a', 'worker-1'),
    ).rejects.toThrow(/no permission decision was made/);
    expect(cluster.healthRefreshes).toEqual([]);
  });

  it('refuses a list granted a read scope but no per-server decisions', async () => {
    const { servers } = service();
    const scope = { filter: () => true } as never;
    await expect(
      servers.listServers(user, 'plant-a', { grant: { scope } }),
    ).rejects.toThrow(/no per-server decision/);
  });

  it('refuses a grant that names no cluster, and writes with one on the cluster', async () => {
    const { cluster, servers } = service();
    const scope = { filter: () => true } as never;
    const cordon = {
      cluster: 'plant-a',
      node: 'worker-1',
      action: 'cordon' as const,
      body: { reason: 'replace the failed disk in bay 3' },
    };
    await expect(
      servers.requestAction(user, cordon, { grant: { scope } }),
    ).rejects.toThrow(/no cluster was granted/);
    expect(cluster.created).toEqual([]);
    await servers.requestAction(user, cordon, { grant: { cluster, scope } });
    expect(cluster.created).toHaveLength(1);
  });
});
