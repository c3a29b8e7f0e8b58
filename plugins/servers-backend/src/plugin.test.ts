import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import request from 'supertest';
import { serversPlugin } from './plugin';

describe('serversPlugin', () => {
  it('answers /health without credentials', async () => {
    const { server } = await startTestBackend({
      features: [serversPlugin],
    });
    const res = await request(server).get('/api/servers/health');
    expect(res.status).toBe(200);
    expect(res.body).toEqual({ status: 'ok' });
  });

  it('refuses to start when a cluster entry is invalid', async () => {
    await expect(
      startTestBackend({
        features: [
          serversPlugin,
          mockServices.rootConfig.factory({
            data: { servers: { clusters: [{ name: 'Bad Name' }] } },
          }),
        ],
      }),
    ).rejects.toThrow(/servers\.clusters\[0\]\.name/);
  });
});
