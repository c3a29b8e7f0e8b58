/*
 * Redfish conformance against the DMTF mockups vendored in fixtures/redfish, served by a
 * local HTTP(S) server (testing/mockupBmc.ts): public-rackmount1 publishes the ResetTypes inline
 * (`ResetType@Redfish.AllowableValues`), public-telemetry through `@Redfish.ActionInfo`;
 * both have a SessionService, which a variant removes (as sushy-tools has none).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gzipSync } from 'node:zlib';
import { REPO_ROOT } from '@rackside/rack-testing';
import { PowerChannelError } from '../types';
import {
  MockupBmc,
  mockupDir,
  OTHER_CA_PEM,
  TEST_BMC_CERT_PEM,
  TEST_BMC_KEY_PEM,
  TEST_CA_PEM,
} from '../../testing';
import { BmcRateLimiter } from './rateLimit';
import { REDFISH_BODY_LIMITS, RedfishClient } from './RedfishClient';
import { RedfishError } from './errors';
import { RedfishPowerChannel } from './RedfishPowerChannel';
import { chooseResetType, readPowerState } from './resetTypes';

const RACKMOUNT = mockupDir(REPO_ROOT, 'public-rackmount1');
const TELEMETRY = mockupDir(REPO_ROOT, 'public-telemetry');
const RACKMOUNT_SYSTEM = '/redfish/v1/Systems/437XR1138R2';
const TELEMETRY_SYSTEM = '/redfish/v1/Systems/1';
const CREDENTIALS = { username: 'admin', password: 'p4ss-w0rd!' };

/** No spacing: these tests are about the protocol (the limiter has its own tests). */
const noWait = () => new BmcRateLimiter({ minIntervalMs: 0 });

const open: Array<{ close(): Promise<void> } | { stop(): Promise<void> }> = [];
async function bmc(
  options: Partial<ConstructorParameters<typeof MockupBmc>[0]> = {},
) {
  const server = await new MockupBmc({ dir: RACKMOUNT, ...options }).start();
  open.push(server);
  return server;
}
function client(
  server: MockupBmc,
  extra: Partial<ConstructorParameters<typeof RedfishClient>[0]> = {},
) {
  const c = new RedfishClient({
    address: server.url,
    credentials: CREDENTIALS,
    rateLimiter: noWait(),
    ...extra,
  });
  open.push(c);
  return c;
}
afterEach(async () => {
  while (open.length) {
    const item = open.pop()!;
    await ('stop' in item ? item.stop() : item.close());
  }
});

describe('choosing the ResetType', () => {
  const all = [
    'On',
    'ForceOff',
    'GracefulShutdown',
    'GracefulRestart',
    'ForceRestart',
    'ForceOn',
  ];
  it.each([
    ['reboot', all, 'GracefulRestart'],
    ['reboot', ['ForceRestart', 'On'], 'ForceRestart'],
    ['shutdown', all, 'GracefulShutdown'],
    ['shutdown', ['ForceOff', 'On'], undefined],
    ['forceOff', all, 'ForceOff'],
    ['powerOn', all, 'On'],
    ['powerOn', ['ForceOn', 'ForceOff'], 'ForceOn'],
    ['reboot', undefined, 'GracefulRestart'],
  ] as const)('%s from %j is %s', (verb, allowed, expected) => {
    expect(chooseResetType(verb, allowed)).toBe(expected);
  });

  it('reads transitional power states as where they are heading', () => {
    expect(
      ['On', 'PoweringOn', 'Off', 'PoweringOff', 'Paused', null].map(
        readPowerState,
      ),
    ).toEqual(['On', 'On', 'Off', 'Off', undefined, undefined]);
  });
});

describe('RedfishClient against public-rackmount1 (AllowableValues, SessionService)', () => {
  it('logs in with a session, uses the token, and deletes the session on close', async () => {
    const server = await bmc();
    const c = new RedfishClient({
      address: server.url,
      credentials: CREDENTIALS,
      rateLimiter: noWait(),
    });
    expect(await c.authKind()).toBe('session');
    await c.get(RACKMOUNT_SYSTEM);
    expect(server.count('POST', '/redfish/v1/SessionService/Sessions')).toBe(1);
    expect(server.requests.find(r => r.path === RACKMOUNT_SYSTEM)?.auth).toBe(
      'session',
    );
    expect(server.sessions.size).toBe(1);
    await c.close();
    expect(server.count('DELETE', '/redfish/v1/SessionService/Sessions/')).toBe(
      1,
    );
    expect(server.sessions.size).toBe(0);
  });

  it('reads the allowed ResetTypes inline', async () => {
    const c = client(await bmc());
    await expect(c.resetAction(RACKMOUNT_SYSTEM)).resolves.toEqual({
      target: `${RACKMOUNT_SYSTEM}/Actions/ComputerSystem.Reset`,
      allowed: [
        'On',
        'ForceOff',
        'GracefulShutdown',
        'GracefulRestart',
        'ForceRestart',
        'Nmi',
        'ForceOn',
        'PushPowerButton',
      ],
      source: 'AllowableValues',
    });
  });

  it.each([
    ['reboot', 'GracefulRestart'],
    ['shutdown', 'GracefulShutdown'],
    ['forceOff', 'ForceOff'],
    ['powerOn', 'On'],
  ] as const)('%s sends exactly one Reset with %s', async (verb, resetType) => {
    const server = await bmc();
    const c = client(server);
    await expect(c.reset(RACKMOUNT_SYSTEM, verb)).resolves.toEqual({
      resetType,
      status: 204,
    });
    expect(server.resets).toEqual([{ path: RACKMOUNT_SYSTEM, resetType }]);
    expect(server.count('POST', `${RACKMOUNT_SYSTEM}/Actions`)).toBe(1);
  });

  it.each([200, 202])('accepts %i', async status => {
    const server = await bmc({ resetStatus: status });
    await expect(
      client(server).reset(RACKMOUNT_SYSTEM, 'reboot'),
    ).resolves.toEqual({
      resetType: 'GracefulRestart',
      status,
    });
  });

  it('falls back to the forced types the BMC allows, and refuses a shutdown it cannot do gracefully', async () => {
    const server = await bmc();
    server.edit(RACKMOUNT_SYSTEM, json => {
      json.Actions['#ComputerSystem.Reset'][
        'ResetType@Redfish.AllowableValues'
      ] = ['ForceOn', 'ForceOff', 'ForceRestart'];
    });
    const c = client(server);
    expect((await c.reset(RACKMOUNT_SYSTEM, 'reboot')).resetType).toBe(
      'ForceRestart',
    );
    expect((await c.reset(RACKMOUNT_SYSTEM, 'powerOn')).resetType).toBe(
      'ForceOn',
    );
    const error = await c.reset(RACKMOUNT_SYSTEM, 'shutdown').catch(e => e);
    expect(error).toBeInstanceOf(RedfishError);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toBe(
      `Redfish BMC ${server.url}: ${RACKMOUNT_SYSTEM} allows no ResetType for shutdown (allowed: ForceOn, ForceOff, ForceRestart)`,
    );
    expect(server.resets.map(r => r.resetType)).toEqual([
      'ForceRestart',
      'ForceOn',
    ]);
  });

  it('reports a refused Reset with the BMC, the status and the BMC message, without credentials', async () => {
    const server = await bmc({ resetStatus: 500 });
    const error = await client(server)
      .reset(RACKMOUNT_SYSTEM, 'reboot')
      .catch(e => e);
    expect(error.status).toBe(500);
    expect(error.outcome).toBe('refused');
    expect(error.message).toBe(
      `Redfish BMC ${server.url}: POST ${RACKMOUNT_SYSTEM}/Actions/ComputerSystem.Reset (ResetType GracefulRestart) answered 500 Internal Server Error: the BMC could not do it`,
    );
    expect(error.message).not.toContain(CREDENTIALS.password);
  });

  it('a ResetType outside the list is a 400 from the BMC, reported as refused', async () => {
    const server = await bmc();
    // The BMC claims nothing (so the client picks GracefulRestart) but its ActionInfo says otherwise.
    server.edit(RACKMOUNT_SYSTEM, json => {
      delete json.Actions['#ComputerSystem.Reset'][
        'ResetType@Redfish.AllowableValues'
      ];
    });
    const c = client(server);
    expect((await c.resetAction(RACKMOUNT_SYSTEM)).source).toBe('none');
    server.edit(RACKMOUNT_SYSTEM, json => {
      json.Actions['#ComputerSystem.Reset']['@Redfish.ActionInfo'] =
        '/redfish/v1/Systems/437XR1138R2/ResetActionInfo';
    });
    server.overrides.set('/redfish/v1/Systems/437XR1138R2/ResetActionInfo', {
      Parameters: [{ Name: 'ResetType', AllowableValues: ['ForceRestart'] }],
    });
    expect((await c.reset(RACKMOUNT_SYSTEM, 'reboot')).resetType).toBe(
      'ForceRestart',
    );
  });

  it('reads PowerState, PoweringOn as On and PoweringOff as Off', async () => {
    const server = await bmc();
    const c = client(server);
    expect(await c.powerState(RACKMOUNT_SYSTEM)).toBe('On');
    for (const [reported, read] of [
      ['PoweringOff', 'Off'],
      ['Off', 'Off'],
      ['PoweringOn', 'On'],
    ]) {
      server.edit(RACKMOUNT_SYSTEM, json => {
        json.PowerState = reported;
      });
      expect(await c.powerState(RACKMOUNT_SYSTEM)).toBe(read);
    }
    server.edit(RACKMOUNT_SYSTEM, json => {
      json.PowerState = null;
    });
    await expect(c.powerState(RACKMOUNT_SYSTEM)).rejects.toThrow(
      `${RACKMOUNT_SYSTEM} reports PowerState null`,
    );
  });

  it('finds a system by its UUID, whatever the case', async () => {
    const c = client(await bmc());
    await expect(
      c.findSystemByUuid('38947555-7742-3448-3784-823347823834'.toUpperCase()),
    ).resolves.toBe(RACKMOUNT_SYSTEM);
    await expect(
      c.findSystemByUuid('00000000-0000-0000-0000-00000000beef'),
    ).resolves.toBeUndefined();
  });

  it('logs in again once when the session expired, and the Reset is sent once', async () => {
    const server = await bmc();
    const c = client(server);
    await c.get(RACKMOUNT_SYSTEM);
    server.sessions.clear(); // the BMC forgot the session
    await c.reset(RACKMOUNT_SYSTEM, 'reboot');
    expect(server.count('POST', '/redfish/v1/SessionService/Sessions')).toBe(2);
    expect(server.resets).toHaveLength(1);
  });

  it('asks whether it may still act right before the Reset POST, after its reads: no, and nothing is sent', async () => {
    const server = await bmc();
    const c = client(server);
    const readsWhenAsked: number[] = [];
    const error = await c
      .reset(RACKMOUNT_SYSTEM, 'reboot', {
        beforePost: () => {
          readsWhenAsked.push(server.count('GET', RACKMOUNT_SYSTEM));
          throw new Error('this replica no longer leads');
        },
      })
      .catch(e => e);
    expect(error).toBeInstanceOf(RedfishError);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toMatch(/not sent: this replica no longer leads/);
    expect(server.resets).toHaveLength(0);
    // Asked after the system was read, not before.
    expect(readsWhenAsked).toEqual([1]);
    await c.reset(RACKMOUNT_SYSTEM, 'reboot', { beforePost: () => {} });
    expect(server.resets).toHaveLength(1);
  });

  it('refused credentials: a clear error that echoes neither the password nor the BMC text', async () => {
    const server = await bmc();
    const c = client(server, {
      credentials: { username: 'admin', password: 'wrong-secret' },
    });
    const error = await c.get(RACKMOUNT_SYSTEM).catch(e => e);
    expect(error.message).toBe(
      `Redfish BMC ${server.url}: the BMC refused the credentials (401 Unauthorized on POST /redfish/v1/SessionService/Sessions)`,
    );
    expect(error.outcome).toBe('notSent');
    expect(JSON.stringify({ ...error, message: error.message })).not.toContain(
      'wrong-secret',
    );
  });
});

describe('RedfishClient against public-telemetry (ActionInfo)', () => {
  it('reads the allowed ResetTypes from the ActionInfo resource', async () => {
    const server = await bmc({ dir: TELEMETRY });
    const c = client(server);
    await expect(c.resetAction(TELEMETRY_SYSTEM)).resolves.toEqual({
      target: `${TELEMETRY_SYSTEM}/Actions/ComputerSystem.Reset`,
      allowed: [
        'On',
        'ForceOff',
        'GracefulShutdown',
        'GracefulRestart',
        'ForceRestart',
        'Nmi',
        'ForceOn',
        'PushPowerButton',
      ],
      source: 'ActionInfo',
    });
    await c.reset(TELEMETRY_SYSTEM, 'reboot');
    expect(server.resets).toEqual([
      { path: TELEMETRY_SYSTEM, resetType: 'GracefulRestart' },
    ]);
  });

  it('follows a narrower ActionInfo', async () => {
    const server = await bmc({ dir: TELEMETRY });
    server.edit(`${TELEMETRY_SYSTEM}/ResetActionInfo`, json => {
      json.Parameters[0].AllowableValues = [
        'ForceOn',
        'ForceRestart',
        'GracefulShutdown',
      ];
    });
    const c = client(server);
    expect((await c.reset(TELEMETRY_SYSTEM, 'powerOn')).resetType).toBe(
      'ForceOn',
    );
    expect((await c.reset(TELEMETRY_SYSTEM, 'reboot')).resetType).toBe(
      'ForceRestart',
    );
  });
});

describe('RedfishClient without a SessionService (like sushy-tools)', () => {
  it('uses Basic auth and never posts a session', async () => {
    const server = await bmc({ withoutSessionService: true });
    const c = client(server);
    expect(await c.authKind()).toBe('basic');
    await c.reset(RACKMOUNT_SYSTEM, 'powerOn');
    expect(server.count('POST', '/redfish/v1/SessionService')).toBe(0);
    expect(
      server.requests
        .filter(r => r.path !== '/redfish/v1')
        .every(r => r.auth === 'basic'),
    ).toBe(true);
    await c.close();
    expect(server.count('DELETE')).toBe(0);
  });

  it('says so when Basic credentials are refused', async () => {
    const server = await bmc({ withoutSessionService: true });
    const c = client(server, {
      credentials: { username: 'admin', password: 'nope' },
    });
    await expect(c.get(RACKMOUNT_SYSTEM)).rejects.toThrow(
      `Redfish BMC ${server.url}: the BMC refused the credentials (401 Unauthorized on GET ${RACKMOUNT_SYSTEM})`,
    );
  });
});

describe('TLS', () => {
  const tlsBmc = () =>
    bmc({ tls: { cert: TEST_BMC_CERT_PEM, key: TEST_BMC_KEY_PEM } });

  it('verifies the BMC against its CA bundle', async () => {
    const server = await tlsBmc();
    const c = client(server, { tls: { caBundle: TEST_CA_PEM } });
    expect(await c.powerState(RACKMOUNT_SYSTEM)).toBe('On');
  });

  it('refuses a certificate another CA issued: not sent', async () => {
    const server = await tlsBmc();
    const c = client(server, { tls: { caBundle: OTHER_CA_PEM } });
    const error = await c.reset(RACKMOUNT_SYSTEM, 'reboot').catch(e => e);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toMatch(
      new RegExp(`^Redfish BMC ${server.url}: GET /redfish/v1/ failed: `),
    );
    expect(server.requests).toHaveLength(0);
  });

  it('skips verification only when told to', async () => {
    const server = await tlsBmc();
    const c = client(server, { tls: { insecureSkipVerify: true } });
    expect(await c.powerState(RACKMOUNT_SYSTEM)).toBe('On');
  });

  it.each([
    ['neither', undefined],
    ['both', { caBundle: TEST_CA_PEM, insecureSkipVerify: true }],
    ['insecure false', { insecureSkipVerify: false }],
  ])('refuses https with %s', (_name, tls) => {
    expect(
      () =>
        new RedfishClient({
          address: 'https://10.0.5.21',
          credentials: CREDENTIALS,
          tls,
        }),
    ).toThrow(
      'BMC https://10.0.5.21: give exactly one of a CA bundle or insecureSkipVerify: true',
    );
  });
});

describe('BMC addresses', () => {
  it('refuses user info in the address without repeating it', () => {
    let message = '';
    try {
      // eslint-disable-next-line no-new
      new RedfishClient({
        address: 'https://root:calvin@10.0.5.21',
        credentials: CREDENTIALS,
        tls: { insecureSkipVerify: true },
      });
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      'BMC address for https://10.0.5.21 carries user info; put credentials in the Secret',
    );
  });

  it.each(['ftp://10.0.5.21', 'https://10.0.5.21/redfish/v1', 'not a url'])(
    'refuses %s',
    address => {
      expect(
        () =>
          new RedfishClient({
            address,
            credentials: CREDENTIALS,
            tls: { insecureSkipVerify: true },
          }),
      ).toThrow(/^BMC address/);
    },
  );

  it('a BMC that does not answer: not sent, with the BMC named', async () => {
    const closed = await bmc();
    const address = closed.url;
    await closed.stop();
    const c = new RedfishClient({
      address,
      credentials: CREDENTIALS,
      rateLimiter: noWait(),
    });
    open.push(c);
    const read = await c.get('/redfish/v1/Systems').catch(e => e);
    expect(read.outcome).toBe('notSent');
    const error = await c
      .reset('/redfish/v1/Systems/1', 'reboot')
      .catch(e => e);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toMatch(
      new RegExp(
        `^Redfish BMC ${address}: GET /redfish/v1/ failed: connect ECONNREFUSED`,
      ),
    );
  });
});

describe('a connection lost after the Reset was sent', () => {
  it('is "unknown": the BMC may have acted', async () => {
    const server = await bmc({ resetStatus: 0 });
    const error = await client(server)
      .reset(RACKMOUNT_SYSTEM, 'reboot')
      .catch(e => e);
    expect(error).toBeInstanceOf(RedfishError);
    expect(error.outcome).toBe('unknown');
    expect(error.message).toMatch(
      new RegExp(
        `^Redfish BMC ${server.url}: POST ${RACKMOUNT_SYSTEM}/Actions/ComputerSystem.Reset failed: `,
      ),
    );
    expect(server.resets).toHaveLength(1);
  });
});

describe('per-BMC rate limit', () => {
  it('spaces requests to one host, not across hosts', async () => {
    let now = 1000;
    const sleeps: number[] = [];
    const limiter = new BmcRateLimiter({
      minIntervalMs: 250,
      clock: {
        now: () => now,
        sleep: async ms => {
          sleeps.push(ms);
          now += ms;
        },
      },
    });
    await limiter.acquire('a:443'); // free
    await limiter.acquire('a:443'); // waits 250
    await limiter.acquire('b:443'); // another host: free
    now += 100;
    await limiter.acquire('a:443'); // booked at 1500, now 1350: waits 150
    now += 1000;
    await limiter.acquire('a:443'); // idle long enough: free
    expect(sleeps).toEqual([250, 150]);
  });

  it('refuses a negative interval', () => {
    expect(() => new BmcRateLimiter({ minIntervalMs: -1 })).toThrow(
      'minIntervalMs must be a non-negative number',
    );
  });

  it('holds between the requests a client sends: each waits for the limiter first', async () => {
    const server = await bmc();
    // A clock of the test's own: what is checked is that every request asks the
    // limiter and is sent only once it answers, not how a busy machine schedules timers.
    let now = 0;
    const sleeps: number[] = [];
    const limiter = new BmcRateLimiter({
      minIntervalMs: 120,
      clock: {
        now: () => now,
        sleep: async ms => {
          sleeps.push(ms);
          now += ms;
        },
      },
    });
    const seenAtAcquire: number[] = [];
    const acquire = limiter.acquire.bind(limiter);
    limiter.acquire = async (host: string) => {
      seenAtAcquire.push(server.requests.length);
      await acquire(host);
    };
    const c = client(server, { rateLimiter: limiter });
    await c.get(RACKMOUNT_SYSTEM); // root, session, system
    await c.get(RACKMOUNT_SYSTEM);
    expect(server.requests).toHaveLength(4);
    // Before each request the BMC had seen only the ones before it...
    expect(seenAtAcquire).toEqual([0, 1, 2, 3]);
    // ...and every request after the first waited the whole interval.
    expect(sleeps).toEqual([120, 120, 120]);
  });
});

describe('RedfishPowerChannel', () => {
  it('advertises what the capability rule says of redfish', () => {
    const channel = new RedfishPowerChannel({
      resolveBmc: () => {
        throw new Error('unused');
      },
      tls: { insecureSkipVerify: true },
    });
    expect(channel.capabilities).toEqual({
      reboot: true,
      shutdown: true,
      powerOn: true,
      confirmsPowerOff: true,
    });
  });

  it('finds the system by the node UUID, sends the verb once, and reads the power back', async () => {
    const server = await bmc();
    const channel = new RedfishPowerChannel({
      resolveBmc: () => ({ address: server.url, credentials: CREDENTIALS }),
      tls: {},
      minIntervalMs: 0,
    });
    open.push(channel);
    const node = {
      name: 'worker-1',
      systemUUID: '38947555-7742-3448-3784-823347823834',
    };
    const receipt = await channel.shutdown(node);
    expect(receipt).toMatchObject({
      channel: 'redfish',
      verb: 'shutdown',
      node: 'worker-1',
      detail: `ResetType GracefulShutdown accepted by ${server.url}${RACKMOUNT_SYSTEM} (HTTP 204)`,
    });
    expect(await channel.powerState(node)).toBe('Off');
    await channel.powerOn(node);
    expect(await channel.powerState(node)).toBe('On');
    expect(server.resets.map(r => r.resetType)).toEqual([
      'GracefulShutdown',
      'On',
    ]);
    // Discovered once, one session for the BMC.
    expect(server.count('GET', '/redfish/v1/Systems')).toBeGreaterThan(0);
    expect(server.count('POST', '/redfish/v1/SessionService/Sessions')).toBe(1);
  });

  it('a node it cannot place is "notSent" and nothing reaches a BMC', async () => {
    const server = await bmc();
    const channel = new RedfishPowerChannel({
      resolveBmc: node => {
        if (node.name === 'virt-1')
          throw new Error('node virt-1 has no ServerBMC');
        return { address: server.url, credentials: CREDENTIALS };
      },
      tls: {},
      minIntervalMs: 0,
    });
    open.push(channel);
    const unknownBmc = await channel.reboot({ name: 'virt-1' }).catch(e => e);
    expect(unknownBmc).toBeInstanceOf(PowerChannelError);
    expect(unknownBmc.outcome).toBe('notSent');
    expect(unknownBmc.message).toBe(
      'redfish: reboot node virt-1 failed: node virt-1 has no ServerBMC',
    );
    const noUuid = await channel.reboot({ name: 'worker-9' }).catch(e => e);
    expect(noUuid.message).toBe(
      'redfish: node worker-9 has no system path on its BMC and no system UUID to find it by',
    );
    const noSystem = await channel
      .reboot({
        name: 'worker-8',
        systemUUID: '00000000-0000-0000-0000-000000000008',
      })
      .catch(e => e);
    expect(noSystem.message).toBe(
      `redfish: BMC ${server.url} has no system with UUID 00000000-0000-0000-0000-000000000008 (node worker-8)`,
    );
    expect(server.resets).toHaveLength(0);
  });

  it('new credentials replace the client and end the old session', async () => {
    const server = await bmc();
    let password = CREDENTIALS.password;
    const channel = new RedfishPowerChannel({
      resolveBmc: () => ({
        address: server.url,
        systemPath: RACKMOUNT_SYSTEM,
        credentials: { username: 'admin', password },
      }),
      tls: {},
      minIntervalMs: 0,
    });
    open.push(channel);
    await channel.powerState({ name: 'cp-1' });
    password = 'rotated';
    const error = await channel.powerState({ name: 'cp-1' }).catch(e => e);
    expect(error.message).toContain('the BMC refused the credentials');
    expect(error.message).not.toContain('rotated');
    await new Promise(resolve => setTimeout(resolve, 50));
    expect(server.count('DELETE', '/redfish/v1/SessionService/Sessions/')).toBe(
      1,
    );
  });
});

describe('bounded answers', () => {
  /**
   * A BMC whose answers a test writes itself: the service root is `{}` (Basic auth, no
   * SessionService), every other path is `answer`'s.
   */
  async function rawBmc(
    answer: (req: http.IncomingMessage, res: http.ServerResponse) => void,
  ) {
    const seen: http.IncomingMessage[] = [];
    const server = http.createServer((req, res) => {
      seen.push(req);
      if (req.url === '/redfish/v1' || req.url === '/redfish/v1/') {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      answer(req, res);
    });
    await new Promise<void>(resolve =>
      server.listen(0, '127.0.0.1', () => resolve()),
    );
    const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
    const stop = async () => {
      server.closeAllConnections();
      await new Promise(resolve => server.close(resolve));
    };
    open.push({ stop });
    return { url, seen };
  }
  function rawClient(
    url: string,
    extra: Partial<ConstructorParameters<typeof RedfishClient>[0]> = {},
  ) {
    const c = new RedfishClient({
      address: url,
      credentials: CREDENTIALS,
      rateLimiter: noWait(),
      ...extra,
    });
    open.push(c);
    return c;
  }
  /** Writes `bytes` of a JSON string, honouring back-pressure; counts what was written. */
  function stream(res: http.ServerResponse, bytes: number) {
    const sent = { bytes: 0 };
    res.write('{"Big":"');
    const chunk = 'M'.repeat(64 * 1024);
    const more = () => {
      while (sent.bytes < bytes) {
        sent.bytes += chunk.length;
        if (!res.write(chunk)) {
          res.once('drain', more);
          return;
        }
      }
      res.end('"}');
    };
    res.on('close', () => res.removeAllListeners('drain'));
    more();
    return sent;
  }

  it('refuses a streamed answer past 1 MiB, naming the BMC, the path and the limit, without reading it all', async () => {
    let sent = { bytes: 0 };
    const { url } = await rawBmc((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      sent = stream(res, 64 * 1024 * 1024);
    });
    await expect(rawClient(url).get('/redfish/v1/Big')).rejects.toThrow(
      `Redfish BMC ${url}: GET /redfish/v1/Big: the answer is larger than the limit of 1,048,576 bytes (1 MiB); not read`,
    );
    expect(sent.bytes).toBeLessThan(16 * 1024 * 1024);
  });

  it('refuses at once an answer whose Content-Length is past the cap', async () => {
    const { url } = await rawBmc((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': String(200 * 1024 * 1024),
      });
      res.write('{"Big":"');
    });
    await expect(rawClient(url).get('/redfish/v1/Big')).rejects.toThrow(
      /the answer is larger than the limit of 1,048,576 bytes \(1 MiB\)/,
    );
  });

  it('a Content-Length that lies (declares 20 bytes, sends 4 MiB) is an error, never a partial answer', async () => {
    const { url } = await rawBmc((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-length': '20',
      });
      stream(res, 4 * 1024 * 1024);
    });
    await expect(rawClient(url).get('/redfish/v1/Lie')).rejects.toThrow(
      /Redfish BMC .*: GET \/redfish\/v1\/Lie: the answer (is not JSON|broke off)/,
    );
  });

  it('a larger cap is asked per read (a collection page: 4 MiB)', async () => {
    const { url } = await rawBmc((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      stream(res, 2 * 1024 * 1024);
    });
    const json = await rawClient(url).get('/redfish/v1/Page', {
      maxBytes: REDFISH_BODY_LIMITS.collectionPage,
    });
    expect(json.Big.length).toBeGreaterThanOrEqual(2 * 1024 * 1024);
  });

  it('a body that stalls after its headers fails at the request deadline; it is not an empty answer', async () => {
    const { url } = await rawBmc((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"Id":');
    });
    await expect(
      rawClient(url, { timeoutMs: 300 }).get('/redfish/v1/Stall'),
    ).rejects.toThrow(
      `Redfish BMC ${url}: GET /redfish/v1/Stall: the answer did not arrive in time (the request passed its deadline)`,
    );
  });

  it('a reading signal ends a request under way and refuses to send the next', async () => {
    const { url, seen } = await rawBmc((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{');
    });
    const stalled = rawClient(url);
    const reading = new AbortController();
    const pending = stalled.get('/redfish/v1/Stall', {
      signal: reading.signal,
    });
    await waitUntil(() => seen.some(r => r.url === '/redfish/v1/Stall'));
    reading.abort(new Error('the health reading passed its deadline of 3 s'));
    await expect(pending).rejects.toThrow(
      /GET \/redfish\/v1\/Stall(: the answer did not arrive in time \(| failed: )the health reading passed its deadline of 3 s/,
    );
    const before = seen.length;
    await expect(
      stalled.get('/redfish/v1/Next', { signal: reading.signal }),
    ).rejects.toThrow(/GET \/redfish\/v1\/Next not sent: the health reading/);
    expect(seen.length).toBe(before);
  });

  it('asks for no compression, and counts a gzip answer it gets anyway by its decoded size', async () => {
    const zipped = gzipSync(
      Buffer.from(`{"Big":"${'0'.repeat(32 * 1024 * 1024)}"}`),
    );
    const { url, seen } = await rawBmc((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/json',
        'content-encoding': 'gzip',
        'content-length': String(zipped.length),
      });
      res.end(zipped);
    });
    await expect(rawClient(url).get('/redfish/v1/Bomb')).rejects.toThrow(
      /the answer is larger than the limit of 1,048,576 bytes/,
    );
    expect(
      seen.find(r => r.url === '/redfish/v1/Bomb')?.headers['accept-encoding'],
    ).toBe('identity');
  });

  it('an error answer with a huge body is its status, read no further than 64 KiB', async () => {
    let sent = { bytes: 0 };
    const { url } = await rawBmc((_req, res) => {
      res.writeHead(500, { 'content-type': 'application/json' });
      sent = stream(res, 64 * 1024 * 1024);
    });
    await expect(rawClient(url).get('/redfish/v1/Broken')).rejects.toThrow(
      `Redfish BMC ${url}: GET /redfish/v1/Broken answered 500 Internal Server Error`,
    );
    expect(sent.bytes).toBeLessThan(16 * 1024 * 1024);
  });
});

async function waitUntil(check: () => boolean) {
  while (!check()) await new Promise(resolve => setImmediate(resolve));
}
