import { ResponseError } from '@backstage/errors';
import { ServersClient } from './ServersClient';
import { fakeBackendApis, jsonResponse } from '../testing/backendHttp';
import {
  ApprovalRungGrewError,
  describeError,
  PreflightChangedError,
} from './errors';
import { preflightResponse } from '../testing/drain';

function client(response: Response) {
  const apis = fakeBackendApis(response);
  return { ...apis, client: new ServersClient(apis) };
}

describe('ServersClient', () => {
  it('lists clusters from /clusters', async () => {
    const {
      client: c,
      fetch,
      discoveryApi,
    } = client(jsonResponse(200, { items: [{ name: 'rack' }] }));
    await expect(c.listClusters()).resolves.toEqual([{ name: 'rack' }]);
    expect(discoveryApi.getBaseUrl).toHaveBeenCalledWith('servers');
    expect(fetch.mock.calls[0][0]).toBe('http://backend/api/servers/clusters');
  });

  it('lists servers, one server and maintenances of a cluster (escaped)', async () => {
    const { client: c, fetch } = client(jsonResponse(200, { items: [] }));
    await c.listServers('rack a');
    await c.getServer('rack', 'node/1');
    await c.listMaintenances('rack', 'node/1');
    await c.getMaintenance('rack', 'm-1');
    expect(fetch.mock.calls.map(call => call[0])).toEqual([
      'http://backend/api/servers/clusters/rack%20a/servers',
      'http://backend/api/servers/clusters/rack/servers/node%2F1',
      'http://backend/api/servers/clusters/rack/maintenances?node=node%2F1',
      'http://backend/api/servers/clusters/rack/maintenances/m-1',
    ]);
  });

  it("asks a firmware plan's pre-flight with one targets parameter per component, a comma in an id kept", async () => {
    const { client: c, fetch } = client(jsonResponse(200, {}));
    await c.planPreflight('rack', {
      intent: 'firmware',
      nodes: ['worker-1', 'worker-2'],
      imageURI: 'https://fw.example/bios.bin',
      targets: ['/FirmwareInventory/BIOS,Backup', 'BMC'],
    });
    const url = new URL(fetch.mock.calls[0][0]);
    expect(url.searchParams.getAll('targets')).toEqual([
      '/FirmwareInventory/BIOS,Backup',
      'BMC',
    ]);
  });

  it('asks for a window of the servers with its filter, sort and continue', async () => {
    const { client: c, fetch } = client(
      jsonResponse(200, { items: [], total: 0, offset: 0 }),
    );
    await c.listServerWindow('rack a', { limit: 100, sort: 'name' });
    await c.listServerWindow('rack', {
      limit: 200,
      continue: 'tok/en=',
      filter: 'zone=west',
      sort: 'ready',
      direction: 'desc',
    });
    await c.listServerWindow('rack', {});
    expect(fetch.mock.calls.map(call => call[0])).toEqual([
      'http://backend/api/servers/clusters/rack%20a/servers?limit=100&sort=name',
      'http://backend/api/servers/clusters/rack/servers?limit=200&continue=tok%2Fen%3D&filter=zone%3Dwest&sort=ready&direction=desc',
      // Never no parameter at all: that is the whole list.
      'http://backend/api/servers/clusters/rack/servers?sort=name',
    ]);
  });

  it('posts an action with its body', async () => {
    const { client: c, fetch } = client(jsonResponse(201, { name: 'm-1' }));
    await expect(
      c.requestAction('rack', 'worker-1', 'cordon', { reason: 'disk swap' }),
    ).resolves.toEqual({ name: 'm-1' });
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe(
      'http://backend/api/servers/clusters/rack/servers/worker-1/actions/cordon',
    );
    expect(init?.method).toBe('POST');
    expect(JSON.parse(String(init?.body))).toEqual({ reason: 'disk swap' });
  });

  it('posts a health refresh and reads the 429 as its message', async () => {
    const { client: c, fetch } = client(
      jsonResponse(202, { requestedAt: '2026-12-06T10:00:00Z' }),
    );
    await expect(c.requestHealthRefresh('rack', 'node/1')).resolves.toEqual({
      requestedAt: '2026-12-06T10:00:00Z',
    });
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe(
      'http://backend/api/servers/clusters/rack/servers/node%2F1/health/refresh',
    );
    expect(init?.method).toBe('POST');

    const { client: limited } = client(
      jsonResponse(429, {
        error: {
          name: 'HealthRefreshTooSoonError',
          message: 'ask again after 2026-12-06T10:01:00.000Z (in 42 s)',
        },
        request: { method: 'POST', url: '/x' },
        response: { statusCode: 429 },
      }),
    );
    const error = await limited
      .requestHealthRefresh('rack', 'worker-1')
      .catch(e => e);
    expect(describeError(error)).toEqual({
      message: 'ask again after 2026-12-06T10:01:00.000Z (in 42 s)',
      status: 429,
    });
  });

  it('reads the allowed upgrade and firmware sources', async () => {
    const sources = {
      talosImages: ['factory.talos.dev/installer/'],
      firmwareSources: ['https://fw.plant.example'],
    };
    const { client: c, fetch } = client(jsonResponse(200, sources));
    await expect(c.getUpgradeSources()).resolves.toEqual(sources);
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe('http://backend/api/servers/upgrades/sources');
    expect(init?.method ?? 'GET').toBe('GET');
  });

  it("rejects with a ResponseError carrying the backend's message", async () => {
    const { client: c } = client(
      jsonResponse(
        409,
        {
          error: {
            name: 'ConflictError',
            message: 'would break quorum',
            members: 3,
            quorum: 2,
            margin: 0,
          },
          request: { method: 'POST', url: '/x' },
          response: { statusCode: 409 },
        },
        'Conflict',
      ),
    );
    const error = await c
      .requestAction('rack', 'cp-1', 'cordon', { reason: 'x' })
      .catch(e => e);
    expect(ResponseError.is(error)).toBe(true);
    expect(describeError(error)).toEqual({
      message: 'would break quorum',
      status: 409,
      quorum: { members: 3, quorum: 2, margin: 0 },
    });
  });

  it('asks for a pre-flight with only the options that are on', async () => {
    const preflight = preflightResponse();
    const { client: c, fetch } = client(jsonResponse(200, preflight));
    await expect(c.preflight('rack', 'worker-1', 'drain')).resolves.toEqual(
      preflight,
    );
    await c.preflight('rack', 'worker-1', 'drain', {
      deleteEmptyDirData: true,
      force: false,
    });
    await c.preflight('rack', 'worker 1', 'reboot', {
      deleteEmptyDirData: true,
      force: true,
    });
    await c.preflight('rack', 'worker-1', 'shutdown', {
      allowNodeLocalData: true,
    });
    await c.preflight('rack', 'worker-1', 'drain', {
      allowNodeLocalData: false,
    });
    expect(fetch.mock.calls.map(call => call[0])).toEqual([
      'http://backend/api/servers/clusters/rack/servers/worker-1/preflight?action=drain',
      'http://backend/api/servers/clusters/rack/servers/worker-1/preflight?action=drain&deleteEmptyDirData=true',
      'http://backend/api/servers/clusters/rack/servers/worker%201/preflight?action=reboot&deleteEmptyDirData=true&force=true',
      'http://backend/api/servers/clusters/rack/servers/worker-1/preflight?action=shutdown&allowNodeLocalData=true',
      'http://backend/api/servers/clusters/rack/servers/worker-1/preflight?action=drain',
    ]);
  });

  it('posts a drain with its token and options', async () => {
    const { client: c, fetch } = client(jsonResponse(201, { name: 'm-2' }));
    await c.requestAction('rack', 'worker-1', 'drain', {
      reason: 'kernel update',
      preflightToken: 'tok-1',
      deleteEmptyDirData: true,
      force: false,
    });
    const [url, init] = fetch.mock.calls[0];
    expect(url).toBe(
      'http://backend/api/servers/clusters/rack/servers/worker-1/actions/drain',
    );
    expect(JSON.parse(String(init?.body))).toEqual({
      reason: 'kernel update',
      preflightToken: 'tok-1',
      deleteEmptyDirData: true,
      force: false,
    });
  });

  it('rejects a 409 that carries a new pre-flight with PreflightChangedError', async () => {
    const preflight = preflightResponse({ token: 'tok-2' });
    const { client: c } = client(
      jsonResponse(
        409,
        {
          error: {
            name: 'ConflictError',
            message: 'The impact changed since the pre-flight was taken',
          },
          preflight,
        },
        'Conflict',
      ),
    );
    const error = await c
      .requestAction('rack', 'worker-1', 'drain', {
        reason: 'x',
        preflightToken: 'tok-1',
      })
      .catch(e => e);
    expect(PreflightChangedError.is(error)).toBe(true);
    expect(error.preflight).toEqual(preflight);
    expect(ResponseError.is(error.cause)).toBe(true);
    expect(describeError(error)).toEqual({
      message: 'The impact changed since the pre-flight was taken',
      status: 409,
    });
  });

  it('keeps a 409 without a pre-flight a ResponseError', async () => {
    const { client: c } = client(
      jsonResponse(
        409,
        {
          error: { name: 'ConflictError', message: 'already draining' },
          response: { statusCode: 409 },
        },
        'Conflict',
      ),
    );
    const error = await c
      .requestAction('rack', 'worker-1', 'drain', { reason: 'x' })
      .catch(e => e);
    expect(PreflightChangedError.is(error)).toBe(false);
    expect(describeError(error).message).toBe('already draining');
  });

  it('reports a 403 of the pre-flight with its message', async () => {
    const { client: c } = client(
      jsonResponse(
        403,
        {
          error: { name: 'NotAllowedError', message: 'servers:drain denied' },
          response: { statusCode: 403 },
        },
        'Forbidden',
      ),
    );
    const error = await c.preflight('rack', 'w', 'drain').catch(e => e);
    expect(describeError(error)).toEqual({
      message: 'servers:drain denied',
      status: 403,
    });
  });

  it('lists the approvals for me and reads and decides an approval (escaped)', async () => {
    const { client: c, fetch } = client(
      jsonResponse(200, { items: [{ name: 'm-1' }], state: 'approved' }),
    );
    await expect(c.listApprovalsForMe()).resolves.toEqual([{ name: 'm-1' }]);
    await c.getApproval('rack a', 'maintenance', 'm/1');
    await c.getApproval('rack', 'plan', 'reboot-plan-abc');
    await expect(
      c.decideApproval('rack', 'maintenance', 'm-1', {
        decision: 'approve',
        reason: 'checked with the storage team',
        preflightToken: 'tok-1',
        typedName: 'cp-1',
      }),
    ).resolves.toMatchObject({ state: 'approved' });
    await c.decideApproval('rack', 'plan', 'reboot-plan-abc', {
      decision: 'reject',
      reason: 'not in this window',
    });
    expect(fetch.mock.calls.map(call => call[0])).toEqual([
      'http://backend/api/servers/approvals?for=me',
      'http://backend/api/servers/clusters/rack%20a/maintenances/m%2F1/approval',
      'http://backend/api/servers/clusters/rack/plans/reboot-plan-abc/approval',
      'http://backend/api/servers/clusters/rack/maintenances/m-1/approval',
      'http://backend/api/servers/clusters/rack/plans/reboot-plan-abc/approval',
    ]);
    const [, approve] = fetch.mock.calls[3];
    expect(approve?.method).toBe('POST');
    expect(JSON.parse(String(approve?.body))).toEqual({
      decision: 'approve',
      reason: 'checked with the storage team',
      preflightToken: 'tok-1',
      typedName: 'cp-1',
    });
    expect(JSON.parse(String(fetch.mock.calls[4][1]?.body))).toEqual({
      decision: 'reject',
      reason: 'not in this window',
    });
  });

  it('rejects a 409 with both rungs with ApprovalRungGrewError, beside or inside error', async () => {
    const beside = client(
      jsonResponse(
        409,
        {
          error: {
            name: 'ConflictError',
            message: 'the impact grew to hazard: the requester must ask again',
          },
          requestedRung: 'preflight',
          rungNow: 'hazard',
        },
        'Conflict',
      ),
    ).client;
    const error = await beside
      .decideApproval('rack', 'maintenance', 'm-1', {
        decision: 'approve',
        reason: 'x',
        preflightToken: 'tok-1',
      })
      .catch(e => e);
    expect(ApprovalRungGrewError.is(error)).toBe(true);
    expect(error.requestedRung).toBe('preflight');
    expect(error.rungNow).toBe('hazard');
    expect(ResponseError.is(error.cause)).toBe(true);
    expect(describeError(error)).toEqual({
      message: 'the impact grew to hazard: the requester must ask again',
      status: 409,
    });

    const inside = client(
      jsonResponse(
        409,
        {
          error: {
            name: 'ConflictError',
            message: 'grew',
            requestedRung: 'reason',
            rungNow: 'typed-name',
          },
        },
        'Conflict',
      ),
    ).client;
    const nested = await inside
      .decideApproval('rack', 'plan', 'p', { decision: 'approve', reason: 'x' })
      .catch(e => e);
    expect(ApprovalRungGrewError.is(nested)).toBe(true);
    expect([nested.requestedRung, nested.rungNow]).toEqual([
      'reason',
      'typed-name',
    ]);

    // A 409 without rungs (already decided) stays a ResponseError.
    const decided = client(
      jsonResponse(
        409,
        {
          error: { name: 'ConflictError', message: 'already approved' },
          response: { statusCode: 409 },
        },
        'Conflict',
      ),
    ).client;
    const plain = await decided
      .decideApproval('rack', 'plan', 'p', { decision: 'reject', reason: 'x' })
      .catch(e => e);
    expect(ApprovalRungGrewError.is(plain)).toBe(false);
    expect(ResponseError.is(plain)).toBe(true);
    expect(describeError(plain).message).toBe('already approved');
  });
});
