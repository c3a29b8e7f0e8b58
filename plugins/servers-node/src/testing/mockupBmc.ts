/*
 * Test helper: serves a DMTF Redfish mockup folder (fixtures/redfish/<name> at the repository root) as a
 * BMC would. GETs answer the mockup's index.json files; the SessionService, the Reset
 * action (checked against the mockup's AllowableValues or ActionInfo) and Basic/session
 * authentication are implemented on top. Exported by the testing entry point
 * (`@rackside/plugin-servers-node/testing`), never by the product one.
 */
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import http, { type IncomingMessage, type ServerResponse } from 'node:http';
import https from 'node:https';
import type { AddressInfo } from 'node:net';
import path from 'node:path';

export interface MockupBmcOptions {
  /** The mockup folder, e.g. `.../fixtures/redfish/public-rackmount1`. */
  dir: string;
  username?: string;
  password?: string;
  /** Remove the SessionService (as sushy-tools has none): clients must use Basic. */
  withoutSessionService?: boolean;
  /** The status a Reset answers; default 204. 0: the connection drops after the request. */
  resetStatus?: number;
  /** Serve HTTPS with this certificate. */
  tls?: { cert: string; key: string };
}

export interface RecordedRequest {
  method: string;
  path: string;
  auth: 'session' | 'basic' | 'none' | 'bad';
  body?: any;
  at: number;
}

/** A Redfish resource as the mockup serves it (parsed JSON). */
export type MockupResource = Record<string, any>;

const REDFISH_ROOT = '/redfish/v1';
const SESSIONS_PATH = `${REDFISH_ROOT}/SessionService/Sessions`;

function redfishError(code: string, message: string) {
  return {
    error: {
      code: `Base.1.15.${code}`,
      message,
      '@Message.ExtendedInfo': [
        { MessageId: `Base.1.15.${code}`, Message: message },
      ],
    },
  };
}

export class MockupBmc {
  readonly requests: RecordedRequest[] = [];
  readonly resets: Array<{ path: string; resetType: string }> = [];
  readonly sessions = new Map<string, string>();
  /** Resources changed by tests, by path (without its trailing slash). */
  readonly overrides = new Map<string, MockupResource>();
  /** Resources the BMC does not offer (path without trailing slash): they answer 404. */
  readonly removed = new Set<string>();
  /** Redirects answered for a request path (exactly as sent), whatever the method. */
  readonly redirects = new Map<string, { status: number; location: string }>();
  /**
   * Answers a test writes itself, by request path (without the query): a huge body, a
   * stall, paged collections. Asked after authentication.
   */
  readonly raw = new Map<
    string,
    (req: IncomingMessage, res: ServerResponse, url: URL) => void
  >();
  /** The `Location` header of a new session (undefined: none). */
  sessionLocation: (id: string) => string | undefined = id =>
    `${SESSIONS_PATH}/${id}`;
  /** The `@odata.id` in the body of a new session. */
  sessionOdataId: (id: string) => string = id => `${SESSIONS_PATH}/${id}`;
  resetStatus: number;
  private readonly options: Required<
    Pick<MockupBmcOptions, 'username' | 'password' | 'dir'>
  > &
    MockupBmcOptions;
  private server?: http.Server;
  url = '';

  constructor(options: MockupBmcOptions) {
    this.options = { username: 'admin', password: 'p4ss-w0rd!', ...options };
    this.resetStatus = options.resetStatus ?? 204;
  }

  /** A resource as the mockup (or a test override) has it. */
  resource(resourcePath: string): MockupResource | undefined {
    const key = resourcePath.replace(/\/+$/, '') || REDFISH_ROOT;
    if (this.removed.has(key)) return undefined;
    const override = this.overrides.get(key);
    if (override) return override;
    if (key !== REDFISH_ROOT && !key.startsWith(`${REDFISH_ROOT}/`)) {
      return undefined;
    }
    const rel = key.slice(REDFISH_ROOT.length);
    const file = path.join(this.options.dir, rel, 'index.json');
    if (!file.startsWith(this.options.dir) || !fs.existsSync(file)) {
      return undefined;
    }
    const json = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (this.options.withoutSessionService && key === REDFISH_ROOT) {
      delete json.SessionService;
      if (json.Links) delete json.Links.Sessions;
    }
    return json;
  }

  /** Changes a resource for the rest of the test (deep copy of the mockup's). */
  edit(resourcePath: string, change: (json: MockupResource) => void) {
    const key = resourcePath.replace(/\/+$/, '');
    const json = structuredClone(this.resource(key));
    if (!json) throw new Error(`no resource ${key} in the mockup`);
    change(json);
    this.overrides.set(key, json);
  }

  count(method: string, pathPrefix = '') {
    return this.requests.filter(
      r => r.method === method && r.path.startsWith(pathPrefix),
    ).length;
  }

  async start(): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      this.handle(req, res).catch(error => {
        res.writeHead(500).end(String(error));
      });
    };
    this.server = this.options.tls
      ? https.createServer(
          { cert: this.options.tls.cert, key: this.options.tls.key },
          handler,
        )
      : http.createServer(handler);
    await new Promise<void>(resolve =>
      this.server!.listen(0, '127.0.0.1', () => resolve()),
    );
    const { port } = this.server.address() as AddressInfo;
    this.url = `${this.options.tls ? 'https' : 'http'}://127.0.0.1:${port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>(resolve => this.server!.close(() => resolve()));
  }

  private authOf(req: IncomingMessage): RecordedRequest['auth'] {
    const token = req.headers['x-auth-token'];
    if (typeof token === 'string') {
      return this.sessions.has(token) ? 'session' : 'bad';
    }
    const header = req.headers.authorization;
    if (typeof header === 'string' && header.startsWith('Basic ')) {
      const [user, ...rest] = Buffer.from(header.slice(6), 'base64')
        .toString()
        .split(':');
      return user === this.options.username &&
        rest.join(':') === this.options.password
        ? 'basic'
        : 'bad';
    }
    return 'none';
  }

  private send(
    res: ServerResponse,
    status: number,
    body?: unknown,
    headers = {},
  ) {
    if (body === undefined) {
      res.writeHead(status, headers).end();
      return;
    }
    res
      .writeHead(status, { 'content-type': 'application/json', ...headers })
      .end(JSON.stringify(body));
  }

  private async handle(req: IncomingMessage, res: ServerResponse) {
    const chunks: Buffer[] = [];
    for await (const chunk of req) chunks.push(chunk as Buffer);
    const text = Buffer.concat(chunks).toString();
    // A multipart push (a firmware image) is not JSON: kept as its text.
    let body: any;
    try {
      body = text ? JSON.parse(text) : undefined;
    } catch {
      body = text;
    }
    const url = new URL(req.url ?? '/', 'http://bmc');
    const resourcePath = url.pathname.replace(/\/+$/, '') || '/';
    const auth = this.authOf(req);
    const method = req.method ?? 'GET';
    this.requests.push({
      method,
      path: resourcePath,
      auth,
      body,
      at: Date.now(),
    });

    const sessionsPath = SESSIONS_PATH;
    const hasSessions = !this.options.withoutSessionService;

    const redirect = this.redirects.get(url.pathname);
    if (redirect) {
      this.send(res, redirect.status, undefined, {
        location: redirect.location,
      });
      return;
    }

    // The service root is readable without authentication (DSP0266).
    if (method === 'GET' && resourcePath === REDFISH_ROOT) {
      this.send(res, 200, this.resource(REDFISH_ROOT));
      return;
    }
    if (method === 'POST' && resourcePath === sessionsPath && hasSessions) {
      if (
        body?.UserName !== this.options.username ||
        body?.Password !== this.options.password
      ) {
        this.send(
          res,
          401,
          redfishError('NoValidSession', `Login failed for ${body?.UserName}`),
        );
        return;
      }
      const id = randomUUID();
      const token = randomUUID();
      this.sessions.set(token, id);
      const location = this.sessionLocation(id);
      this.send(
        res,
        201,
        {
          '@odata.id': this.sessionOdataId(id),
          Id: id,
          UserName: body.UserName,
        },
        { 'x-auth-token': token, ...(location ? { location } : {}) },
      );
      return;
    }
    if (auth !== 'session' && auth !== 'basic') {
      this.send(
        res,
        401,
        redfishError('NoValidSession', 'authentication required'),
      );
      return;
    }
    const raw = this.raw.get(resourcePath);
    if (raw) {
      raw(req, res, url);
      return;
    }
    if (method === 'DELETE' && resourcePath.startsWith(`${sessionsPath}/`)) {
      const id = resourcePath.slice(sessionsPath.length + 1);
      for (const [token, sid] of this.sessions) {
        if (sid === id) this.sessions.delete(token);
      }
      this.send(res, 204);
      return;
    }
    if (method === 'GET') {
      let json = this.resource(resourcePath);
      if (!json) {
        this.send(
          res,
          404,
          redfishError('ResourceNotFound', `${resourcePath} not found`),
        );
        return;
      }
      // `$expand=.($levels=1)` (what the service root offers): members inlined.
      if (
        url.searchParams.get('$expand')?.startsWith('.') &&
        Array.isArray(json.Members)
      ) {
        json = {
          ...json,
          Members: json.Members.map((member: MockupResource) => {
            const id = member?.['@odata.id'];
            return (typeof id === 'string' && this.resource(id)) || member;
          }),
        };
      }
      this.send(res, 200, json);
      return;
    }
    if (
      method === 'POST' &&
      resourcePath.endsWith('/Actions/ComputerSystem.Reset')
    ) {
      const systemPath = resourcePath.slice(
        0,
        -'/Actions/ComputerSystem.Reset'.length,
      );
      const system = this.resource(systemPath);
      const action = system?.Actions?.['#ComputerSystem.Reset'];
      // Links may be absolute URLs of this BMC: compare their paths.
      const pathIn = (link: string) =>
        new URL(link, 'http://bmc').pathname.replace(/\/+$/, '');
      if (!action || pathIn(action.target) !== resourcePath) {
        this.send(res, 404, redfishError('ResourceNotFound', 'no such action'));
        return;
      }
      let allowed: string[] | undefined =
        action['ResetType@Redfish.AllowableValues'];
      if (!allowed && action['@Redfish.ActionInfo']) {
        allowed = this.resource(
          pathIn(action['@Redfish.ActionInfo']),
        )?.Parameters?.find(
          (p: MockupResource) => p.Name === 'ResetType',
        )?.AllowableValues;
      }
      const resetType = body?.ResetType;
      if (allowed && !allowed.includes(resetType)) {
        this.send(
          res,
          400,
          redfishError(
            'ActionParameterValueNotInList',
            `The value ${resetType} for the parameter ResetType is not in the list of acceptable values.`,
          ),
        );
        return;
      }
      if (this.resetStatus === 0) {
        this.resets.push({ path: systemPath, resetType });
        req.socket.destroy();
        return;
      }
      if (this.resetStatus >= 300) {
        this.send(
          res,
          this.resetStatus,
          redfishError('InternalError', 'the BMC could not do it'),
        );
        return;
      }
      this.resets.push({ path: systemPath, resetType });
      this.edit(systemPath, json => {
        if (
          ['On', 'ForceOn', 'GracefulRestart', 'ForceRestart'].includes(
            resetType,
          )
        ) {
          json.PowerState = 'On';
        } else if (['ForceOff', 'GracefulShutdown'].includes(resetType)) {
          json.PowerState = 'Off';
        }
      });
      if (this.resetStatus === 204) this.send(res, 204);
      else this.send(res, this.resetStatus, {});
      return;
    }
    this.send(
      res,
      405,
      redfishError('OperationNotAllowed', `${method} ${resourcePath}`),
    );
  }
}

/** The DMTF mockups vendored in the repository (fixtures/redfish, with their licence). */
export function mockupDir(
  root: string,
  name: 'public-rackmount1' | 'public-telemetry',
) {
  return path.resolve(root, 'fixtures', 'redfish', name);
}

export interface OriginRequest {
  method: string;
  path: string;
  authorization?: string;
  xAuthToken?: string;
  body: string;
}

/**
 * Test helper: "another origin" a hostile BMC points at. It records every request that
 * reaches it (with any Authorization or X-Auth-Token header and the body) and answers as
 * a BMC would, so a client that follows the link goes on to send what it would send.
 */
export class OtherOrigin {
  readonly requests: OriginRequest[] = [];
  private server?: http.Server;
  url = '';
  port = 0;

  constructor(private readonly tls?: { cert: string; key: string }) {}

  async start(): Promise<this> {
    const handler = (req: IncomingMessage, res: ServerResponse) => {
      const chunks: Buffer[] = [];
      req.on('data', chunk => chunks.push(chunk as Buffer));
      req.on('end', () => {
        const header = (name: string) => {
          const value = req.headers[name];
          return typeof value === 'string' ? value : undefined;
        };
        const method = req.method ?? 'GET';
        this.requests.push({
          method,
          path: req.url ?? '/',
          authorization: header('authorization'),
          xAuthToken: header('x-auth-token'),
          body: Buffer.concat(chunks).toString(),
        });
        if (method === 'POST' && (req.url ?? '').includes('/Sessions')) {
          res
            .writeHead(201, {
              'content-type': 'application/json',
              'x-auth-token': 'token-of-the-other-origin',
              location: `${SESSIONS_PATH}/other`,
            })
            .end('{}');
        } else if (method === 'GET') {
          res
            .writeHead(200, { 'content-type': 'application/json' })
            .end(JSON.stringify({ Members: [], PowerState: 'On' }));
        } else {
          res.writeHead(204).end();
        }
      });
    };
    this.server = this.tls
      ? https.createServer({ cert: this.tls.cert, key: this.tls.key }, handler)
      : http.createServer(handler);
    await new Promise<void>(resolve =>
      this.server!.listen(0, '127.0.0.1', () => resolve()),
    );
    this.port = (this.server.address() as AddressInfo).port;
    this.url = `${this.tls ? 'https' : 'http'}://127.0.0.1:${this.port}`;
    return this;
  }

  async stop(): Promise<void> {
    if (!this.server) return;
    this.server.closeAllConnections();
    await new Promise<void>(resolve => this.server!.close(() => resolve()));
  }
}
