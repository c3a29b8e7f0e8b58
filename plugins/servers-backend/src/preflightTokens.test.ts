/*
 * Pre-flight tokens: one request per token (a second one is a 409 asking for a new
 * pre-flight, nothing written), and a start-up warning when servers.preflight.secret is
 * unset. The cross-replica race runs on the simulated rack
 * (readsAndTokens.integration.test.ts).
 */
import {
  coreServices,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import { mockServices } from '@backstage/backend-test-utils';
import request from 'supertest';
import {
  clusterRegistryServiceRef,
  staticClusterRegistry,
} from './cluster/clusterRegistry';
import { FakeCluster, fakeNode, fakePod } from './testing/fakeCluster';
import { startServersTestBackend } from './testing/testBackend';

const REASON = 'replace the failed disk in bay 3';
const preflightUrl =
  '/api/servers/clusters/plant-a/servers/worker-1/preflight?action=drain';
const drainUrl = '/api/servers/clusters/plant-a/servers/worker-1/actions/drain';

function rack(): FakeCluster {
  const cluster = new FakeCluster('plant-a', [
    fakeNode('cp-1', { controlPlane: true }),
    fakeNode('worker-1'),
  ]);
  cluster.pods.set('worker-1', [fakePod('web-1', 'worker-1', { app: 'web' })]);
  return cluster;
}

function registry(cluster: FakeCluster) {
  return createServiceFactory({
    service: clusterRegistryServiceRef,
    deps: {},
    factory: () => staticClusterRegistry([cluster]),
  });
}

describe('a pre-flight token is used once', () => {
  it('answers a second request with the same token 409 asking for a new pre-flight, nothing written', async () => {
    const cluster = rack();
    const { server } = await startServersTestBackend({
      features: [registry(cluster)],
      config: { preflight: { secret: 'shared' } },
    });
    const { token } = (await request(server).get(preflightUrl)).body;
    const first = await request(server)
      .post(drainUrl)
      .send({ reason: REASON, preflightToken: token });
    expect(first.status).toBe(201);
    // The drain ended: the node is free again and the impact is the same as shown.
    cluster.maintenanceList[0].status = { phase: 'Complete' };

    const again = await request(server)
      .post(drainUrl)
      .send({ reason: REASON, preflightToken: token });
    expect(again.status).toBe(409);
    expect(again.body.error.message).toMatch(
      /pre-flight token was used already.*acknowledge it again/,
    );
    expect(again.body.preflight).toMatchObject({
      node: 'worker-1',
      action: 'drain',
      token: expect.any(String),
    });
    expect(again.body.preflight.token).not.toBe(token);
    expect(cluster.created).toHaveLength(1);

    // The pre-flight the 409 carries is a new acknowledgement.
    const renewed = await request(server)
      .post(drainUrl)
      .send({ reason: REASON, preflightToken: again.body.preflight.token });
    expect(renewed.status).toBe(201);
    expect(cluster.created).toHaveLength(2);
  });

  it('lets exactly one of two concurrent requests with the same token through', async () => {
    const cluster = rack();
    const { server } = await startServersTestBackend({
      features: [registry(cluster)],
      config: { preflight: { secret: 'shared' } },
    });
    const { token } = (await request(server).get(preflightUrl)).body;
    const answers = await Promise.all(
      [1, 2].map(() =>
        request(server)
          .post(drainUrl)
          .send({ reason: REASON, preflightToken: token }),
      ),
    );
    expect(answers.map(a => a.status).sort()).toEqual([201, 409]);
    expect(cluster.created).toHaveLength(1);
  });
});

describe('servers.preflight.secret', () => {
  async function warnings(config: object) {
    const logger = mockServices.logger.mock();
    logger.child.mockReturnValue(logger);
    await startServersTestBackend({
      features: [
        registry(rack()),
        createServiceFactory({
          service: coreServices.logger,
          deps: {},
          factory: () => logger,
        }),
      ],
      config,
    });
    return logger.warn.mock.calls.map(call => String(call[0]));
  }

  it('warns at start-up when it is unset, saying what that costs', async () => {
    expect(await warnings({})).toContainEqual(
      expect.stringMatching(
        /servers\.preflight\.secret is not set.*restart.*other replicas/,
      ),
    );
  });

  it('does not warn when it is set', async () => {
    expect(
      await warnings({ preflight: { secret: 'shared' } }),
    ).not.toContainEqual(expect.stringMatching(/preflight\.secret/));
  });
});
