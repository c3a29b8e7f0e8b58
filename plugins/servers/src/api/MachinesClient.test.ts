import { ResponseError } from '@backstage/errors';
import { MachinesClient } from './MachinesClient';
import { fakeBackendApis, jsonResponse } from '../testing/backendHttp';
import { describeError } from './errors';

function client(response: Response) {
  const apis = fakeBackendApis(response);
  return { ...apis, client: new MachinesClient(apis) };
}

describe('MachinesClient', () => {
  it('reads machines, reclaims and the reclaim offer from their routes', async () => {
    const { client: c, fetch } = client(jsonResponse(200, { items: [] }));
    await c.listMachines('plant a');
    await c.listReclaims('plant-a');
    await c.getReclaim('plant-a', 'reclaim-1');
    await c.canReclaim('plant-a');
    expect(fetch.mock.calls.map(call => call[0])).toEqual([
      'http://backend/api/servers/clusters/plant%20a/machines',
      'http://backend/api/servers/clusters/plant-a/reclaims',
      'http://backend/api/servers/clusters/plant-a/reclaims/reclaim-1',
      'http://backend/api/servers/clusters/plant-a/reclaims/can',
    ]);
  });

  it('posts the bodies of the contract as JSON', async () => {
    const { client: c, fetch } = client(jsonResponse(201, { name: 'x' }));
    await c.addDiscoveryAddress('plant-a', {
      address: '10.0.0.5',
      reason: 'r',
    });
    await c.joinMachine('plant-a', 'u-1', { reason: 'r' });
    await c.createReclaim('plant-a', {
      address: '10.0.0.6',
      talosconfig: 'context: x',
      reason: 'r',
      ttlMinutes: 20,
    });
    await c.confirmReclaim('plant-a', 'reclaim-1', { uuid: 'u-2' });
    expect(
      fetch.mock.calls.map(([url, init]) => [
        url.replace('http://backend/api/servers', ''),
        init?.method,
        JSON.parse(String(init?.body)),
      ]),
    ).toEqual([
      [
        '/clusters/plant-a/discovery/addresses',
        'POST',
        { address: '10.0.0.5', reason: 'r' },
      ],
      ['/clusters/plant-a/machines/u-1/join', 'POST', { reason: 'r' }],
      [
        '/clusters/plant-a/reclaims',
        'POST',
        {
          address: '10.0.0.6',
          talosconfig: 'context: x',
          reason: 'r',
          ttlMinutes: 20,
        },
      ],
      ['/clusters/plant-a/reclaims/reclaim-1/confirm', 'POST', { uuid: 'u-2' }],
    ]);
  });

  it('rejects with a ResponseError carrying the backend message', async () => {
    const { client: c } = client(
      jsonResponse(
        400,
        {
          error: { name: 'InputError', message: 'uuid does not match' },
          request: { method: 'POST', url: '/x' },
          response: { statusCode: 400 },
        },
        'Bad Request',
      ),
    );
    const error = await c
      .confirmReclaim('plant-a', 'r', { uuid: 'u' })
      .catch(e => e);
    expect(ResponseError.is(error)).toBe(true);
    expect(describeError(error)).toEqual({
      message: 'uuid does not match',
      status: 400,
    });
  });
});
