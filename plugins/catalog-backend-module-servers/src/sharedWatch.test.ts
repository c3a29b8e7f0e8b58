/*
 * One watch (issue 21): with the servers backend plugin and this catalog module in one
 * backend, each cluster's Nodes are watched once (the root service
 * clusterNodesServiceRef), counted at the (fake) apiserver.
 */
import {
  createServiceFactory,
  type ServiceFactory,
} from '@backstage/backend-plugin-api';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import catalogPlugin from '@backstage/plugin-catalog-backend';
import { signalsServiceRef } from '@backstage/plugin-signals-node';
import serversPlugin from '@rackside/plugin-servers-backend';
import {
  clusterNodesServiceFactory,
  createClusterNodes,
} from '@rackside/plugin-servers-node';
import { FakeKube } from '@rackside/plugin-servers-node/testing';
import catalogModuleServers from '.';

const NODES = '/api/v1/nodes';

function node(name: string) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels: { 'kubernetes.io/hostname': name } },
    status: { conditions: [{ type: 'Ready', status: 'True' }] },
  } as any;
}

/** Polls `check` (an event we cannot subscribe to from outside) for up to 30 s. */
async function until(check: () => boolean | Promise<boolean>) {
  for (let i = 0; i < 300 && !(await check()); i++) {
    await new Promise(resolve => setTimeout(resolve, 100));
  }
  expect(await check()).toBe(true);
}

// `until` waits up to 30 s for what it polls; Jest's default 5 s ended the test
// first on a loaded CI machine.
jest.setTimeout(60_000);

describe('one Node watch per cluster per backend', () => {
  it('the servers plugin and the catalog module share it', async () => {
    const kube = new FakeKube();
    kube.put(NODES, node('cp-1'));
    kube.put(NODES, node('worker-1'));
    const opened: string[] = [];
    const backend = await startTestBackend({
      features: [
        catalogPlugin,
        catalogModuleServers,
        serversPlugin,
        clusterNodesServiceFactory({
          open: (cluster, defaults) => {
            opened.push(cluster.name);
            return createClusterNodes({ ...defaults, transport: kube });
          },
        }),
        createServiceFactory({
          service: signalsServiceRef,
          deps: {},
          factory: () => ({ publish: async () => {} }),
        }) as ServiceFactory,
        mockServices.rootConfig.factory({
          data: {
            catalog: {
              providers: {
                rackside: {
                  owner: 'plant-admins',
                  schedule: {
                    frequency: { minutes: 30 },
                    timeout: { minutes: 1 },
                    initialDelay: { seconds: 0 },
                  },
                },
              },
            },
            servers: {
              clusters: [
                {
                  name: 'plant-a',
                  // Nothing listens here: the plugin's other caches only retry.
                  url: 'https://127.0.0.1:1',
                  serviceAccountToken: 'unused',
                  skipTLSVerify: true,
                },
              ],
            },
          },
        }),
      ],
    });
    try {
      const { port } = backend.server.address() as { port: number };
      const base = `http://localhost:${port}/api`;
      // The catalog's server entities can only come from the shared watch (its own
      // would have gone to 127.0.0.1:1), and so can the plugin's servers list.
      await until(async () => {
        const res = await fetch(
          `${base}/catalog/entities/by-query?filter=kind=resource`,
        );
        const body = await res.json();
        return (body.items ?? []).length >= 2;
      });
      await until(() => (kube.watchesOpened.get(NODES) ?? 0) >= 1);
      expect(opened).toEqual(['plant-a']);
      expect(kube.watchesOpened.get(NODES)).toBe(1);
    } finally {
      await backend.stop();
    }
  });
});
