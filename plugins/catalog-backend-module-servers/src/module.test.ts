import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import catalogPlugin from '@backstage/plugin-catalog-backend';
import catalogModuleServers from '.';

const start = (catalog: any) =>
  startTestBackend({
    features: [
      catalogPlugin,
      catalogModuleServers,
      mockServices.rootConfig.factory({
        data: { catalog, servers: { clusters: [] } },
      }),
    ],
  });

describe('catalogModuleServers', () => {
  it('starts inside the real catalog backend', async () => {
    const backend = await start({
      providers: { rackside: { owner: 'plant-admins' } },
    });
    const { port } = backend.server.address() as { port: number };
    const res = await fetch(
      `http://localhost:${port}/api/catalog/entities/by-query`,
    );
    expect(res.status).toBe(200);
    await backend.stop();
  });

  it('refuses to start without an owner, naming the key', async () => {
    await expect(start({})).rejects.toThrow(
      /catalog\.providers\.rackside\.owner: required/,
    );
  });

  it('refuses a malformed schedule, naming the key', async () => {
    await expect(
      start({
        providers: {
          rackside: { owner: 'plant-admins', schedule: { frequency: 'often' } },
        },
      }),
    ).rejects.toThrow(/frequency/);
  });
});
