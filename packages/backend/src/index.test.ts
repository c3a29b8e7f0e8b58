import { startTestBackend, mockServices } from '@backstage/backend-test-utils';
import request from 'supertest';
import permissionPlugin from '@backstage/plugin-permission-backend';
import allowAllPolicy from '@backstage/plugin-permission-backend-module-allow-all-policy';
import serversPlugin from '@rackside/plugin-servers-backend';

describe('demo backend wiring', () => {
  it('serves the Rackside plugin next to the permission plugin', async () => {
    const { server } = await startTestBackend({
      features: [
        permissionPlugin,
        allowAllPolicy,
        serversPlugin,
        mockServices.rootConfig.factory({
          data: { permission: { enabled: true } },
        }),
      ],
    });
    const health = await request(server).get('/api/servers/health');
    expect(health.status).toBe(200);
    expect(health.body).toEqual({ status: 'ok' });
  });
});
