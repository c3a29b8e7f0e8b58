/*
 * Same origin (docs/architecture.md, "Power channels"): a hostile BMC (the DMTF mockups of testing/mockupBmc.ts with one
 * link changed) points a link, a header or a redirect at another origin, or at a path
 * outside /redfish/v1/. The client refuses before sending anything there ("notSent", the
 * field named), and "the other origin", a second local listener, receives nothing: no
 * request, so no Authorization or X-Auth-Token header and no password. Over http and https.
 */
import { REPO_ROOT } from '@rackside/rack-testing';
import { PowerChannelError } from '../types';
import { RedfishError } from './errors';
import {
  MockupBmc,
  mockupDir,
  OtherOrigin,
  TEST_BMC_CERT_PEM,
  TEST_BMC_KEY_PEM,
  TEST_CA_PEM,
} from '../../testing';
import { BmcRateLimiter } from './rateLimit';
import { RedfishClient, type RedfishTlsOptions } from './RedfishClient';
import { RedfishPowerChannel } from './RedfishPowerChannel';
import { resolveOnBmc } from './sameOrigin';

const RACKMOUNT = mockupDir(REPO_ROOT, 'public-rackmount1');
const TELEMETRY = mockupDir(REPO_ROOT, 'public-telemetry');
const SYSTEM = '/redfish/v1/Systems/437XR1138R2';
const TELEMETRY_SYSTEM = '/redfish/v1/Systems/1';
const RESET = `${SYSTEM}/Actions/ComputerSystem.Reset`;
const SYSTEM_UUID = '38947555-7742-3448-3784-823347823834';
const CREDENTIALS = { username: 'admin', password: 'p4ss-w0rd!' };
const CERT = { cert: TEST_BMC_CERT_PEM, key: TEST_BMC_KEY_PEM };

const open: Array<{ close(): Promise<void> } | { stop(): Promise<void> }> = [];
afterEach(async () => {
  while (open.length) {
    const item = open.pop()!;
    await ('stop' in item ? item.stop() : item.close());
  }
});

/** Every request the BMC itself received stayed under /redfish/v1. */
function stayedUnderRedfish(server: MockupBmc) {
  return server.requests
    .map(r => r.path)
    .filter(p => p !== '/redfish/v1' && !p.startsWith('/redfish/v1/'));
}

describe.each([
  ['http', undefined],
  ['https', CERT],
] as const)('a hostile BMC over %s', (scheme, tls) => {
  const clientTls: RedfishTlsOptions | undefined = tls
    ? { caBundle: TEST_CA_PEM }
    : undefined;

  async function setUp(dir = RACKMOUNT) {
    const server = await new MockupBmc({ dir, tls }).start();
    open.push(server);
    const other = await new OtherOrigin(tls).start();
    open.push(other);
    const client = new RedfishClient({
      address: server.url,
      credentials: CREDENTIALS,
      tls: clientTls,
      rateLimiter: new BmcRateLimiter({ minIntervalMs: 0 }),
    });
    open.push(client);
    return { server, other, client };
  }

  /** Nothing reached the other origin (checked first: it is the point), then the error. */
  async function expectRefused(
    attempt: Promise<unknown>,
    other: OtherOrigin,
    field: string,
    reason: string | RegExp,
  ) {
    const error = await attempt.then(
      () => undefined,
      e => e,
    );
    expect(other.requests).toEqual([]);
    expect(error).toBeInstanceOf(RedfishError);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toContain(`: ${field} `);
    expect(error.message).toMatch(reason);
    expect(error.message).toContain('nothing was sent to it');
    expect(error.message).not.toContain(CREDENTIALS.password);
    return error as RedfishError;
  }

  const elsewhere = /is refused: it is on another origin \(/;

  it('Systems.@odata.id of the service root', async () => {
    const { server, other, client } = await setUp();
    server.edit('/redfish/v1', json => {
      json.Systems['@odata.id'] = `${other.url}/redfish/v1/Systems`;
    });
    await expectRefused(
      client.findSystemByUuid(SYSTEM_UUID),
      other,
      'Systems.@odata.id of the service root',
      elsewhere,
    );
    expect(other.requests).toEqual([]);
  });

  it('a member @odata.id of the Systems collection', async () => {
    const { server, other, client } = await setUp();
    server.edit('/redfish/v1/Systems', json => {
      json.Members[0]['@odata.id'] = `${other.url}${SYSTEM}`;
    });
    await expectRefused(
      client.findSystemByUuid(SYSTEM_UUID),
      other,
      'Members[0].@odata.id of /redfish/v1/Systems',
      elsewhere,
    );
    expect(other.requests).toEqual([]);
  });

  it('the Reset action target', async () => {
    const { server, other, client } = await setUp();
    server.edit(SYSTEM, json => {
      json.Actions['#ComputerSystem.Reset'].target = `${other.url}${RESET}`;
    });
    await expectRefused(
      client.reset(SYSTEM, 'reboot'),
      other,
      `Actions.#ComputerSystem.Reset.target of ${SYSTEM}`,
      elsewhere,
    );
    expect(other.requests).toEqual([]);
    expect(server.resets).toEqual([]);
  });

  it('the Reset action @Redfish.ActionInfo', async () => {
    const { server, other, client } = await setUp(TELEMETRY);
    server.edit(TELEMETRY_SYSTEM, json => {
      json.Actions['#ComputerSystem.Reset'][
        '@Redfish.ActionInfo'
      ] = `${other.url}${TELEMETRY_SYSTEM}/ResetActionInfo`;
    });
    await expectRefused(
      client.reset(TELEMETRY_SYSTEM, 'reboot'),
      other,
      `Actions.#ComputerSystem.Reset.@Redfish.ActionInfo of ${TELEMETRY_SYSTEM}`,
      elsewhere,
    );
    expect(other.requests).toEqual([]);
    expect(server.resets).toEqual([]);
  });

  it('Links.Sessions of the service root: the password is not posted there', async () => {
    const { server, other, client } = await setUp();
    server.edit('/redfish/v1', json => {
      json.Links.Sessions[
        '@odata.id'
      ] = `${other.url}/redfish/v1/SessionService/Sessions`;
    });
    await expectRefused(
      client.reset(SYSTEM, 'reboot'),
      other,
      'Links.Sessions.@odata.id of the service root',
      elsewhere,
    );
    expect(other.requests).toEqual([]);
    // Nor is Basic tried on the BMC instead: a hostile root ends the login.
    expect(server.requests.map(r => r.path)).toEqual(['/redfish/v1']);
  });

  it('the Location header of a new session: no DELETE (with the token) goes there', async () => {
    const { server, other, client } = await setUp();
    server.sessionLocation = id =>
      `${other.url}/redfish/v1/SessionService/Sessions/${id}`;
    await expectRefused(
      client.get(SYSTEM),
      other,
      'the Location header of the session created by POST /redfish/v1/SessionService/Sessions',
      elsewhere,
    );
    await client.close();
    expect(other.requests).toEqual([]);
    expect(server.count('GET', SYSTEM)).toBe(0);
  });

  it("the session's @odata.id when there is no Location header", async () => {
    const { server, other, client } = await setUp();
    server.sessionLocation = () => undefined;
    server.sessionOdataId = id =>
      `${other.url}/redfish/v1/SessionService/Sessions/${id}`;
    await expectRefused(
      client.get(SYSTEM),
      other,
      '@odata.id of the session created by POST /redfish/v1/SessionService/Sessions',
      elsewhere,
    );
    await client.close();
    expect(other.requests).toEqual([]);
  });

  it('a redirect of the service root', async () => {
    const { server, other, client } = await setUp();
    server.redirects.set('/redfish/v1/', {
      status: 301,
      location: `${other.url}/redfish/v1/`,
    });
    await expectRefused(
      client.get(SYSTEM),
      other,
      'the redirect (301) of GET /redfish/v1/',
      elsewhere,
    );
    expect(other.requests).toEqual([]);
  });

  it('a redirect of a resource read with the session token', async () => {
    const { server, other, client } = await setUp();
    server.redirects.set(SYSTEM, {
      status: 302,
      location: `${other.url}${SYSTEM}`,
    });
    await expectRefused(
      client.powerState(SYSTEM),
      other,
      `the redirect (302) of GET ${SYSTEM}`,
      elsewhere,
    );
    expect(other.requests).toEqual([]);
  });

  it('a redirect of the Reset: not sent elsewhere, not acted on', async () => {
    const { server, other, client } = await setUp();
    server.redirects.set(RESET, {
      status: 307,
      location: `${other.url}${RESET}`,
    });
    await expectRefused(
      client.reset(SYSTEM, 'reboot'),
      other,
      `the redirect (307) of POST ${RESET}`,
      elsewhere,
    );
    expect(other.requests).toEqual([]);
    expect(server.resets).toEqual([]);
  });

  it('a redirect to the same origin but outside /redfish/v1/', async () => {
    const { server, other, client } = await setUp();
    server.redirects.set(SYSTEM, { status: 308, location: '/admin/system' });
    await expectRefused(
      client.get(SYSTEM),
      other,
      `the redirect (308) of GET ${SYSTEM}`,
      'its path /admin/system is outside /redfish/v1/',
    );
    expect(stayedUnderRedfish(server)).toEqual([]);
  });

  it('the system path given by the ServerBMC, through the channel', async () => {
    const { server, other } = await setUp();
    const channel = new RedfishPowerChannel({
      resolveBmc: () => ({
        address: server.url,
        systemPath: `${other.url}${SYSTEM}`,
        credentials: CREDENTIALS,
      }),
      tls: clientTls ?? {},
      minIntervalMs: 0,
    });
    open.push(channel);
    const error = await channel.reboot({ name: 'worker-1' }).catch(e => e);
    expect(other.requests).toEqual([]);
    expect(error).toBeInstanceOf(PowerChannelError);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toContain('the system path ');
    expect(error.message).toMatch(elsewhere);
    expect(other.requests).toEqual([]);
    expect(server.resets).toEqual([]);
  });

  it('a hostile Reset target through the channel is "notSent"', async () => {
    const { server, other } = await setUp();
    server.edit(SYSTEM, json => {
      json.Actions['#ComputerSystem.Reset'].target = `${other.url}${RESET}`;
    });
    const channel = new RedfishPowerChannel({
      resolveBmc: () => ({ address: server.url, credentials: CREDENTIALS }),
      tls: clientTls ?? {},
      minIntervalMs: 0,
    });
    open.push(channel);
    const error = await channel
      .shutdown({ name: 'worker-1', systemUUID: SYSTEM_UUID })
      .catch(e => e);
    expect(other.requests).toEqual([]);
    expect(error).toBeInstanceOf(PowerChannelError);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toContain('Actions.#ComputerSystem.Reset.target');
    expect(other.requests).toEqual([]);
    expect(server.resets).toEqual([]);
  });

  describe('Reset targets that leave /redfish/v1/ or the origin by their form', () => {
    const targets = (bmcPort: string, otherPort: number) =>
      [
        [
          'dot segments',
          '/redfish/v1/../../admin/reset',
          /outside \/redfish\/v1\//,
        ],
        [
          'encoded dot segments',
          '/redfish/v1/Systems/%2e%2e/%2E%2e/%2e%2E/admin/reset',
          /outside \/redfish\/v1\//,
        ],
        [
          'encoded slashes',
          '/redfish/v1/Systems/..%2f..%2f..%2fadmin',
          /percent-encoded/,
        ],
        [
          'encoded backslashes',
          '/redfish/v1/Systems/..%5C..%5C..%5Cadmin',
          /percent-encoded/,
        ],
        [
          'double-encoded dots',
          '/redfish/v1/Systems/%252e%252e/%252e%252e/admin',
          /percent-encoded/,
        ],
        [
          'a look-alike prefix',
          '/redfish/v1evil/Systems/1/Actions/ComputerSystem.Reset',
          /outside \/redfish\/v1\//,
        ],
        [
          'a protocol-relative URL',
          `//127.0.0.1:${otherPort}${RESET}`,
          /another origin/,
        ],
        [
          'a protocol-relative URL with backslashes',
          `\\\\127.0.0.1:${otherPort}${RESET}`,
          /backslash/,
        ],
        [
          'a slash and a backslash',
          `/\\127.0.0.1:${otherPort}${RESET}`,
          /backslash/,
        ],
        [
          'the other scheme on the same host and port',
          `${
            scheme === 'http' ? 'https' : 'http'
          }://127.0.0.1:${bmcPort}${RESET}`,
          /another origin/,
        ],
        [
          'user info on the same origin',
          `${scheme}://admin:p4ss-w0rd!@127.0.0.1:${bmcPort}${RESET}`,
          /user info/,
        ],
        [
          'user info before another host',
          `${scheme}://127.0.0.1:${bmcPort}@127.0.0.1:${otherPort}${RESET}`,
          /another origin/,
        ],
        [
          'a tab the parser drops',
          `/redfish/v1/Sys\ttems/../../../admin`,
          /whitespace/,
        ],
        ['a file URL', 'file:///etc/passwd', /another origin/],
        // eslint-disable-next-line no-script-url -- a hostile link under test, never run
        ['a javascript URL', 'javascript:alert(1)', /another origin/],
        ['a number', 42, /not a URL/],
      ] as const;

    it.each(targets('0', 0).map(([name], index) => [name, index]))(
      '%s',
      async (_name, index) => {
        const { server, other, client } = await setUp();
        const port = new URL(server.url).port;
        const [, target, reason] = targets(port, other.port)[index];
        server.edit(SYSTEM, json => {
          json.Actions['#ComputerSystem.Reset'].target = target;
        });
        const error = await expectRefused(
          client.reset(SYSTEM, 'reboot'),
          other,
          `Actions.#ComputerSystem.Reset.target of ${SYSTEM}`,
          reason,
        );
        expect(error.message).not.toContain('p4ss');
        expect(other.requests).toEqual([]);
        expect(server.resets).toEqual([]);
        expect(stayedUnderRedfish(server)).toEqual([]);
      },
    );
  });

  it('follows what stays on the origin: absolute same-origin links and redirects', async () => {
    const { server, other, client } = await setUp();
    server.edit('/redfish/v1', json => {
      json.Systems['@odata.id'] = `${server.url}/redfish/v1/Systems`;
    });
    server.edit('/redfish/v1/Systems', json => {
      json.Members[0]['@odata.id'] = `${server.url}${SYSTEM}`;
    });
    server.edit(SYSTEM, json => {
      json.Actions['#ComputerSystem.Reset'].target = `${server.url}${RESET}`;
    });
    expect(await client.findSystemByUuid(SYSTEM_UUID)).toBe(SYSTEM);
    server.redirects.set('/redfish/v1/Systems/old-name', {
      status: 301,
      location: SYSTEM,
    });
    expect((await client.get('/redfish/v1/Systems/old-name')).UUID).toBe(
      SYSTEM_UUID,
    );
    // 307 keeps the method and body; the mockup reads the path without its trailing slash.
    server.redirects.set(RESET, {
      status: 307,
      location: `${server.url}${RESET}/`,
    });
    await expect(client.reset(SYSTEM, 'reboot')).resolves.toEqual({
      resetType: 'GracefulRestart',
      status: 204,
    });
    expect(server.resets).toEqual([
      { path: SYSTEM, resetType: 'GracefulRestart' },
    ]);
    // The POST that was redirected, and the one that was answered.
    expect(server.count('POST', RESET)).toBe(2);
    expect(other.requests).toEqual([]);
  });

  it('stops a redirect loop on the origin', async () => {
    const { server, client } = await setUp();
    server.redirects.set(`${SYSTEM}/a`, {
      status: 302,
      location: `${SYSTEM}/b`,
    });
    server.redirects.set(`${SYSTEM}/b`, {
      status: 302,
      location: `${SYSTEM}/a`,
    });
    const error = await client.get(`${SYSTEM}/a`).catch(e => e);
    expect(error).toBeInstanceOf(RedfishError);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toContain(`GET ${SYSTEM}/a was redirected more than`);
    expect(server.count('GET', `${SYSTEM}/`)).toBeLessThanOrEqual(6);
  });
});

describe('resolveOnBmc', () => {
  const bmc = new URL('https://10.0.5.21');

  it.each([
    ['/redfish/v1/Systems/1', 'https://10.0.5.21/redfish/v1/Systems/1'],
    ['/redfish/v1', 'https://10.0.5.21/redfish/v1'],
    [
      'https://10.0.5.21:443/redfish/v1/Systems',
      'https://10.0.5.21/redfish/v1/Systems',
    ],
    [
      '/redfish/v1/Systems/1?$expand=.#frag',
      'https://10.0.5.21/redfish/v1/Systems/1?$expand=.',
    ],
    ['/redfish/v1/Systems/a%20b', 'https://10.0.5.21/redfish/v1/Systems/a%20b'],
  ])('accepts %s', (reference, href) => {
    expect(resolveOnBmc(bmc, reference, 'x').href).toBe(href);
  });

  it.each([
    'https://10.0.5.21:8443/redfish/v1/',
    'http://10.0.5.21/redfish/v1/',
    'https://10.0.5.22/redfish/v1/',
    'https://10.0.5.21.evil.example/redfish/v1/',
    '/redfish/v1/..',
    '/redfish/v',
    '/',
  ])('refuses %s', reference => {
    expect(() => resolveOnBmc(bmc, reference, 'Links.Sessions')).toThrow(
      /^Redfish BMC https:\/\/10\.0\.5\.21: Links\.Sessions ".*" is refused: /,
    );
  });

  it('never shows user info it refuses', () => {
    expect(() =>
      resolveOnBmc(bmc, 'https://root:calvin@10.0.5.21/redfish/v1/', 'target'),
    ).toThrow(
      'Redfish BMC https://10.0.5.21: target "https://10.0.5.21/redfish/v1/" is refused: it carries user info; nothing was sent to it',
    );
  });
});
