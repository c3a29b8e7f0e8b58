import { InputError } from '@backstage/errors';
import { Agent, fetch, type Dispatcher } from 'undici';
import {
  BoundedReadError,
  byteText,
  readBoundedJson,
} from '../../http/boundedBody';
import type { PowerChannelVerb } from '../types';
import {
  networkErrorText,
  networkFailureOutcome,
  RedfishError,
  redfishErrorText,
  statusText,
} from './errors';
import { BmcRateLimiter } from './rateLimit';
import { chooseResetType, readPowerState } from './resetTypes';
import { pathOf, REDFISH_PATH, resolveOnBmc } from './sameOrigin';

/** How to trust a BMC's HTTPS certificate: its CA bundle, or an explicit decision not to check. */
export interface RedfishTlsOptions {
  /** PEM bundle of the CAs that sign the BMC certificates. */
  caBundle?: string;
  /** Do not verify the certificate. Must be set on purpose; never implied. */
  insecureSkipVerify?: boolean;
}

export interface RedfishCredentials {
  username: string;
  password: string;
}

export interface RedfishClientOptions {
  /** The BMC's base URL, e.g. `https://10.0.5.21` (no path, no user info). */
  address: string;
  credentials: RedfishCredentials;
  /** Required for https: exactly one of `caBundle` or `insecureSkipVerify: true`. */
  tls?: RedfishTlsOptions;
  /** Shared by every client of a channel, so the interval holds per BMC host. */
  rateLimiter?: BmcRateLimiter;
  /** Deadline of each request (its headers and its whole body); default 15 s. */
  timeoutMs?: number;
}

/**
 * The byte caps of a BMC's answers (docs/hardware-health.md, "Limits"). An ordinary
 * resource (a system, a chassis, a part) is a few KiB on every BMC seen; a collection page
 * (a log's Entries, an expanded collection) may hold hundreds of members. Past its cap an
 * answer is refused as it streams in, never buffered whole.
 */
export const REDFISH_BODY_LIMITS = {
  /** An ordinary resource: 1 MiB. */
  resource: 1024 * 1024,
  /** One page of a collection (a log's Entries, an expanded collection): 4 MiB. */
  collectionPage: 4 * 1024 * 1024,
  /** The body of an error answer (4xx, 5xx), read only for the BMC's message: 64 KiB. */
  errorAnswer: 64 * 1024,
} as const;

/** How one read is bounded beyond the client's own per-request deadline. */
export interface RedfishReadOptions {
  /** The answer's byte cap; default {@link REDFISH_BODY_LIMITS}.resource. */
  maxBytes?: number;
  /**
   * A deadline shared by every request of one reading (a whole health reading): once it
   * aborts, the request under way and every later one fail with its reason.
   */
  signal?: AbortSignal;
}

/** What a Reset the BMC accepted was. */
export interface RedfishResetResult {
  resetType: string;
  /** 200, 202 or 204. */
  status: number;
}

/** The Reset action of a system, as the BMC publishes it. */
export interface RedfishResetAction {
  target: string;
  /** Allowed ResetTypes; undefined when the BMC published no list. */
  allowed?: string[];
  /** Where the list came from. */
  source: 'AllowableValues' | 'ActionInfo' | 'none';
}

type Json = Record<string, any>;

/** What a POSTed action answered (see `RedfishClient.postAction`). */
export interface RedfishActionAnswer {
  status: number;
  /** The `Location` header, as a path on the BMC (a task monitor for an update). */
  location?: string;
  body: unknown;
}

/** A request body sent as it is (a multipart push), with its own content type. */
export class RedfishRawBody {
  constructor(readonly contentType: string, readonly bytes: Uint8Array) {}
}

function bodyOf(body: unknown): string | Uint8Array | undefined {
  if (body === undefined) return undefined;
  if (body instanceof RedfishRawBody) return body.bytes;
  return JSON.stringify(body);
}

interface Answer {
  status: number;
  headers: { get(name: string): string | null };
  body: unknown;
}

type Auth =
  | { kind: 'session'; token: string; location?: URL }
  | { kind: 'basic' };

const ACCEPTED_RESET_STATUSES = new Set([200, 202, 204]);
const SERVICE_ROOT = REDFISH_PATH;
const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);
/** Redirects followed for one request (each on the BMC's origin) before giving up. */
const MAX_REDIRECTS = 5;

/** The same failure, known not to have reached the point of acting. */
function notSent(error: unknown): unknown {
  if (!(error instanceof RedfishError) || error.outcome === 'notSent') {
    return error;
  }
  return new RedfishError({
    bmc: error.bmc,
    status: error.status,
    outcome: 'notSent',
    message: error.message,
    cause: error.cause,
  });
}

/** The origin of a BMC address, refusing what would leak or misroute credentials. */
function bmcOrigin(address: string): URL {
  let url: URL;
  try {
    url = new URL(address);
  } catch {
    // Not repeated: an unparsable address may still hold credentials.
    throw new InputError('BMC address is not a URL');
  }
  if (url.username || url.password) {
    // Do not repeat the address: it holds the credentials.
    throw new InputError(
      `BMC address for ${url.protocol}//${url.host} carries user info; put credentials in the Secret`,
    );
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') {
    throw new InputError(`BMC address must be http(s): ${url.origin}`);
  }
  if ((url.pathname !== '/' && url.pathname !== '') || url.search) {
    throw new InputError(
      `BMC address must be the service's origin (like https://10.0.5.21), without a path: ${address}`,
    );
  }
  return url;
}

function dispatcherFor(url: URL, tls: RedfishTlsOptions | undefined): Agent {
  if (url.protocol === 'http:') return new Agent();
  const hasCa = Boolean(tls?.caBundle);
  const insecure = tls?.insecureSkipVerify === true;
  if (hasCa === insecure) {
    throw new InputError(
      `BMC ${url.origin}: give exactly one of a CA bundle or insecureSkipVerify: true`,
    );
  }
  return new Agent({
    connect: insecure
      ? { rejectUnauthorized: false }
      : { ca: tls!.caBundle, rejectUnauthorized: true },
  });
}

/**
 * A client of one BMC's Redfish service. It logs in through the SessionService when the
 * service has one (X-Auth-Token, deleted on `close()`), else uses Basic auth; spaces its
 * requests with the shared rate limiter; and never sends a Reset twice (a 401 on a
 * session is re-authenticated once, which is safe: the BMC did not act on it).
 *
 * It sends nothing off the BMC's own origin: every URL it is given or takes from an
 * answer (links, the Reset target, ActionInfo, the session's Location, redirects) goes
 * through `resolveOnBmc` before a request is made, and a refusal is "not sent".
 */
export class RedfishClient {
  readonly origin: string;
  private readonly url: URL;
  private readonly credentials: RedfishCredentials;
  private readonly dispatcher: Dispatcher & { close(): Promise<void> };
  private readonly limiter: BmcRateLimiter;
  private readonly timeoutMs: number;
  private auth?: Promise<Auth>;
  private serviceRoot?: Json;
  private closed = false;

  constructor(options: RedfishClientOptions) {
    this.url = bmcOrigin(options.address);
    this.origin = this.url.origin;
    if (!options.credentials?.username) {
      throw new InputError(
        `BMC ${this.origin}: no username in the credentials`,
      );
    }
    this.credentials = options.credentials;
    this.dispatcher = dispatcherFor(this.url, options.tls);
    this.limiter = options.rateLimiter ?? new BmcRateLimiter();
    this.timeoutMs = options.timeoutMs ?? 15_000;
  }

  /** The kind of authentication in use (after the first request). */
  async authKind(): Promise<Auth['kind']> {
    return (await this.authenticate()).kind;
  }

  /**
   * GET a resource (on the BMC, under /redfish/v1/) as JSON, its answer refused past
   * `options.maxBytes` (1 MiB) and given up at the client's per-request deadline or at
   * `options.signal`, whichever comes first.
   */
  async get(path: string, options: RedfishReadOptions = {}): Promise<Json> {
    return this.read(this.onBmc(path, 'the requested path'), options);
  }

  /** The paths of the ComputerSystems the BMC manages. */
  async systemPaths(): Promise<string[]> {
    const root = await this.root();
    const collectionUrl = this.onBmc(
      root.Systems?.['@odata.id'] ?? '/redfish/v1/Systems',
      'Systems.@odata.id of the service root',
    );
    const collection = await this.read(collectionUrl, {
      maxBytes: REDFISH_BODY_LIMITS.collectionPage,
    });
    const members: unknown[] = Array.isArray(collection.Members)
      ? collection.Members
      : [];
    // Every link is checked before any is followed: one hostile member refuses the list.
    return members.flatMap((member, index) => {
      const id = (member as Json | null)?.['@odata.id'];
      if (typeof id !== 'string') return [];
      return [
        pathOf(
          this.onBmc(
            id,
            `Members[${index}].@odata.id of ${pathOf(collectionUrl)}`,
          ),
        ),
      ];
    });
  }

  /** The system whose UUID is `uuid` (case-insensitive), or undefined. */
  async findSystemByUuid(uuid: string): Promise<string | undefined> {
    const wanted = uuid.toLowerCase();
    for (const path of await this.systemPaths()) {
      const system = await this.get(path);
      if (String(system.UUID ?? '').toLowerCase() === wanted) return path;
    }
    return undefined;
  }

  /** The system's Reset action and the ResetTypes it allows. */
  async resetAction(systemPath: string): Promise<RedfishResetAction> {
    const systemUrl = this.onBmc(systemPath, 'the system path');
    const system = await this.read(systemUrl);
    const action = system.Actions?.['#ComputerSystem.Reset'];
    if (!action?.target) {
      throw new RedfishError({
        bmc: this.origin,
        outcome: 'notSent',
        message: `Redfish BMC ${this.origin}: ${systemPath} has no #ComputerSystem.Reset action`,
      });
    }
    const of = `of ${pathOf(systemUrl)}`;
    const target = pathOf(
      this.onBmc(action.target, `Actions.#ComputerSystem.Reset.target ${of}`),
    );
    const inline = action['ResetType@Redfish.AllowableValues'];
    if (Array.isArray(inline)) {
      return { target, allowed: inline, source: 'AllowableValues' };
    }
    const infoPath = action['@Redfish.ActionInfo'];
    if (infoPath !== undefined && infoPath !== null) {
      const info = await this.read(
        this.onBmc(
          infoPath,
          `Actions.#ComputerSystem.Reset.@Redfish.ActionInfo ${of}`,
        ),
      );
      const parameter = (info.Parameters ?? []).find(
        (p: Json) => p?.Name === 'ResetType',
      );
      if (Array.isArray(parameter?.AllowableValues)) {
        return {
          target,
          allowed: parameter.AllowableValues,
          source: 'ActionInfo',
        };
      }
    }
    return { target, source: 'none' };
  }

  /**
   * Sends the Reset for a verb with the ResetType the BMC allows (see
   * `chooseResetType`). Accepts 200, 202 and 204. Sent once.
   */
  async reset(
    systemPath: string,
    verb: PowerChannelVerb,
    options: {
      /**
       * Asked right before the Reset POST goes out, after the reads, a login and the rate
       * limiter's wait (and again before a POST repeated after a new login): throws when
       * the caller may no longer act (an operator that lost its leadership). Not sent then.
       */
      beforePost?: () => void;
    } = {},
  ): Promise<RedfishResetResult> {
    // Nothing before the POST can have acted: any failure up to there is "not sent".
    let action: RedfishResetAction;
    try {
      action = await this.resetAction(systemPath);
    } catch (error) {
      throw notSent(error);
    }
    const resetType = chooseResetType(verb, action.allowed);
    if (!resetType) {
      throw new RedfishError({
        bmc: this.origin,
        outcome: 'notSent',
        message: `Redfish BMC ${
          this.origin
        }: ${systemPath} allows no ResetType for ${verb} (allowed: ${(
          action.allowed ?? []
        ).join(', ')})`,
      });
    }
    let target: URL;
    try {
      target = this.onBmc(action.target, 'the Reset target');
    } catch (error) {
      throw notSent(error);
    }
    const answer = await this.authorized(
      'POST',
      target,
      { ResetType: resetType },
      options.beforePost,
    );
    if (!ACCEPTED_RESET_STATUSES.has(answer.status)) {
      throw this.answerError(
        'POST',
        pathOf(target),
        answer,
        ` (ResetType ${resetType})`,
      );
    }
    return { resetType, status: answer.status };
  }

  /** PowerState, with PoweringOn read as On and PoweringOff as Off. */
  async powerState(systemPath: string): Promise<'On' | 'Off'> {
    const system = await this.read(this.onBmc(systemPath, 'the system path'));
    const state = readPowerState(system.PowerState);
    if (!state) {
      throw new RedfishError({
        bmc: this.origin,
        outcome: 'refused',
        message: `Redfish BMC ${
          this.origin
        }: ${systemPath} reports PowerState ${JSON.stringify(
          system.PowerState ?? null,
        )}`,
      });
    }
    return state;
  }

  /**
   * POSTs an action (a firmware update: SimpleUpdate, or a multipart push when `body` is a
   * {@link RedfishRawBody}) and answers its status, the `Location` it names (checked to be
   * on the BMC, as every link) and its body. Accepts 200, 201, 202 and 204; anything else
   * is a RedfishError with the BMC's message. Sent once, like a Reset: `beforePost` is
   * asked right before it leaves.
   */
  async postAction(
    path: string,
    body: unknown,
    options: { beforePost?: () => void; signal?: AbortSignal } = {},
  ): Promise<RedfishActionAnswer> {
    let target: URL;
    try {
      target = this.onBmc(path, 'the action target');
    } catch (error) {
      throw notSent(error);
    }
    const answer = await this.authorized(
      'POST',
      target,
      body,
      options.beforePost,
      { signal: options.signal },
    );
    if (![200, 201, 202, 204].includes(answer.status)) {
      throw this.answerError('POST', pathOf(target), answer);
    }
    const location = answer.headers.get('location');
    return {
      status: answer.status,
      location:
        location === null
          ? undefined
          : pathOf(
              this.onBmc(
                location,
                `the Location header of POST ${pathOf(target)}`,
              ),
            ),
      body: answer.body,
    };
  }

  /**
   * GETs a task monitor: 202 while the task runs and 200 once it is done, both with the
   * Task as body (some BMCs answer a finished task's monitor with 204, or with the
   * operation's own answer). Bounded like every read (`options.maxBytes`, the request's
   * deadline and `options.signal`).
   */
  async getMonitor(
    path: string,
    options: RedfishReadOptions = {},
  ): Promise<{ status: number; body: unknown }> {
    const url = this.onBmc(path, 'the task monitor');
    const answer = await this.authorized(
      'GET',
      url,
      undefined,
      undefined,
      options,
    );
    if (![200, 202, 204].includes(answer.status)) {
      throw this.answerError('GET', pathOf(url), answer);
    }
    return { status: answer.status, body: answer.body };
  }

  /** Ends the session (if any) and closes the connections. A second call does nothing. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    const auth = this.auth ? await this.auth.catch(() => undefined) : undefined;
    this.auth = undefined;
    if (auth?.kind === 'session' && auth.location) {
      await this.send('DELETE', auth.location, undefined, auth).catch(
        () => undefined,
      );
    }
    await this.dispatcher.close();
  }

  // --- plumbing ---

  /** A URL on this BMC (see `resolveOnBmc`): the one check before anything is sent. */
  private onBmc(reference: unknown, field: string): URL {
    return resolveOnBmc(this.url, reference, field);
  }

  private async read(
    url: URL,
    options: RedfishReadOptions = {},
  ): Promise<Json> {
    const path = pathOf(url);
    const answer = await this.authorized(
      'GET',
      url,
      undefined,
      undefined,
      options,
    );
    if (answer.status !== 200) throw this.answerError('GET', path, answer);
    if (!answer.body || typeof answer.body !== 'object') {
      throw new RedfishError({
        bmc: this.origin,
        outcome: 'refused',
        status: answer.status,
        message: `Redfish BMC ${this.origin}: GET ${path} did not answer JSON`,
      });
    }
    return answer.body as Json;
  }

  private async root(): Promise<Json> {
    if (!this.serviceRoot) await this.authenticate();
    return this.serviceRoot ?? {};
  }

  private authenticate(): Promise<Auth> {
    if (!this.auth) {
      const attempt = this.login();
      this.auth = attempt;
      // A failed login is not remembered: the next call tries again.
      attempt.catch(() => {
        if (this.auth === attempt) this.auth = undefined;
      });
    }
    return this.auth;
  }

  /** Reads the service root, then opens a session if the service has a SessionService. */
  private async login(): Promise<Auth> {
    const rootUrl = this.onBmc(SERVICE_ROOT, 'the service root');
    let root = await this.send('GET', rootUrl);
    if (root.status === 401 || root.status === 403) {
      root = await this.send('GET', rootUrl, undefined, { kind: 'basic' });
    }
    if (root.status !== 200 || !root.body || typeof root.body !== 'object') {
      throw this.answerError('GET', SERVICE_ROOT, root, '', 'notSent');
    }
    this.serviceRoot = root.body as Json;
    const sessionsLink =
      this.serviceRoot.Links?.Sessions?.['@odata.id'] ??
      (this.serviceRoot.SessionService
        ? '/redfish/v1/SessionService/Sessions'
        : undefined);
    if (!sessionsLink) return { kind: 'basic' };
    // The password goes in this POST's body: checked like any link.
    const sessionsUrl = this.onBmc(
      sessionsLink,
      'Links.Sessions.@odata.id of the service root',
    );
    const sessions = pathOf(sessionsUrl);
    const created = await this.send('POST', sessionsUrl, {
      UserName: this.credentials.username,
      Password: this.credentials.password,
    });
    const token = created.headers.get('x-auth-token');
    if ((created.status === 201 || created.status === 200) && token) {
      // Where close() sends the token with its DELETE. A session that names another
      // origin fails the login (the BMC ends it when it times out).
      const of = `of the session created by POST ${sessions}`;
      const location = created.headers.get('location');
      const id = (created.body as Json | undefined)?.['@odata.id'];
      let sessionUrl: URL | undefined;
      if (location) {
        sessionUrl = this.onBmc(location, `the Location header ${of}`);
      } else if (id !== undefined) {
        sessionUrl = this.onBmc(id, `@odata.id ${of}`);
      }
      return { kind: 'session', token, location: sessionUrl };
    }
    if ([404, 405, 501].includes(created.status)) return { kind: 'basic' };
    // The BMC's text is left out: a login answer may echo what was sent.
    throw new RedfishError({
      bmc: this.origin,
      status: created.status,
      outcome: 'notSent',
      message:
        created.status === 401 || created.status === 403
          ? `Redfish BMC ${
              this.origin
            }: the BMC refused the credentials (${statusText(
              created.status,
            )} on POST ${sessions})`
          : `Redfish BMC ${this.origin}: POST ${sessions} answered ${statusText(
              created.status,
            )}${token ? '' : ' without X-Auth-Token'}`,
    });
  }

  /** A request with authentication; a 401 on a session logs in again, once. */
  private async authorized(
    method: string,
    url: URL,
    body?: unknown,
    beforeSend?: () => void,
    options: RedfishReadOptions = {},
  ): Promise<Answer> {
    const auth = await this.untilAborted(
      this.authenticate(),
      method,
      url,
      options.signal,
    );
    const answer = await this.send(
      method,
      url,
      body,
      auth,
      beforeSend,
      options,
    );
    if (answer.status === 401 && auth.kind === 'session') {
      // The session expired or was dropped by the BMC; it did not act on the request.
      if (this.auth && (await this.auth) === auth) this.auth = undefined;
      const renewed = await this.untilAborted(
        this.authenticate(),
        method,
        url,
        options.signal,
      ).catch(error => {
        throw notSent(error);
      });
      return this.send(method, url, body, renewed, beforeSend, options);
    }
    if (answer.status === 401) {
      throw new RedfishError({
        bmc: this.origin,
        status: 401,
        outcome: 'refused',
        message: `Redfish BMC ${
          this.origin
        }: the BMC refused the credentials (401 Unauthorized on ${method} ${pathOf(
          url,
        )})`,
      });
    }
    return answer;
  }

  /**
   * One request, following redirects by hand: only on the BMC's origin under
   * /redfish/v1/ (a redirect elsewhere is refused, "not sent", before it is followed),
   * only where the request stays the same (a GET, or 307/308 which keep method and
   * body), at most MAX_REDIRECTS times. Any other 3xx is the answer.
   */
  private async send(
    method: string,
    url: URL,
    body?: unknown,
    auth?: Auth,
    beforeSend?: () => void,
    options: RedfishReadOptions = {},
  ): Promise<Answer> {
    let target = url;
    for (let hops = 0; ; hops++) {
      const answer = await this.sendOnce(
        method,
        target,
        body,
        auth,
        beforeSend,
        options,
      );
      const location = answer.headers.get('location');
      if (
        !REDIRECT_STATUSES.has(answer.status) ||
        location === null ||
        (method !== 'GET' && answer.status !== 307 && answer.status !== 308)
      ) {
        return answer;
      }
      if (hops === MAX_REDIRECTS) {
        throw new RedfishError({
          bmc: this.origin,
          status: answer.status,
          outcome: 'notSent',
          message: `Redfish BMC ${this.origin}: ${method} ${pathOf(
            url,
          )} was redirected more than ${MAX_REDIRECTS} times; not followed further`,
        });
      }
      target = this.onBmc(
        location,
        `the redirect (${answer.status}) of ${method} ${pathOf(target)}`,
      );
    }
  }

  /**
   * `promise`, or a "not sent" RedfishError as soon as `signal` aborts (a login shared by
   * several readings is not cancelled: only this caller stops waiting for it).
   */
  private untilAborted<T>(
    promise: Promise<T>,
    method: string,
    url: URL,
    signal: AbortSignal | undefined,
  ): Promise<T> {
    if (!signal) return promise;
    const aborted = () =>
      new RedfishError({
        bmc: this.origin,
        outcome: 'notSent',
        message: `Redfish BMC ${this.origin}: ${method} ${pathOf(
          url,
        )} not sent: ${reasonText(signal)}`,
        cause: signal.reason,
      });
    if (signal.aborted) return Promise.reject(aborted());
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(aborted());
      signal.addEventListener('abort', onAbort, { once: true });
      promise.then(
        value => {
          signal.removeEventListener('abort', onAbort);
          resolve(value);
        },
        error => {
          signal.removeEventListener('abort', onAbort);
          reject(error);
        },
      );
    });
  }

  private async sendOnce(
    method: string,
    url: URL,
    body?: unknown,
    auth?: Auth,
    beforeSend?: () => void,
    options: RedfishReadOptions = {},
  ): Promise<Answer> {
    const path = pathOf(url);
    const reading = options.signal;
    if (reading?.aborted) {
      throw new RedfishError({
        bmc: this.origin,
        outcome: 'notSent',
        message: `Redfish BMC ${
          this.origin
        }: ${method} ${path} not sent: ${reasonText(reading)}`,
        cause: reading.reason,
      });
    }
    const headers: Record<string, string> = {
      accept: 'application/json',
      // The cap counts decoded bytes; asking for none keeps a small answer from
      // unpacking into a large one at all.
      'accept-encoding': 'identity',
      'odata-version': '4.0',
    };
    if (body instanceof RedfishRawBody) {
      headers['content-type'] = body.contentType;
    } else if (body !== undefined) {
      headers['content-type'] = 'application/json';
    }
    if (auth?.kind === 'session') headers['x-auth-token'] = auth.token;
    if (auth?.kind === 'basic') {
      headers.authorization = `Basic ${Buffer.from(
        `${this.credentials.username}:${this.credentials.password}`,
      ).toString('base64')}`;
    }
    await this.untilAborted(
      this.limiter.acquire(this.url.host),
      method,
      url,
      reading,
    );
    // The last moment before the request leaves: nothing else is awaited after this.
    try {
      beforeSend?.();
    } catch (error) {
      throw new RedfishError({
        bmc: this.origin,
        outcome: 'notSent',
        message: `Redfish BMC ${this.origin}: ${method} ${path} not sent: ${
          (error as Error).message
        }`,
        cause: error,
      });
    }
    // One signal for the headers and the whole body: the request's own deadline, and the
    // reading's when there is one.
    const requestDeadline = AbortSignal.timeout(this.timeoutMs);
    const signal = reading
      ? AbortSignal.any([reading, requestDeadline])
      : requestDeadline;
    let response;
    try {
      // Redirects are never followed by fetch: `send` checks each one first.
      response = await fetch(url, {
        method,
        headers,
        body: bodyOf(body),
        dispatcher: this.dispatcher,
        redirect: 'manual',
        signal,
      });
    } catch (error) {
      throw new RedfishError({
        bmc: this.origin,
        outcome: networkFailureOutcome(error),
        message: `Redfish BMC ${this.origin}: ${method} ${path} failed: ${
          signal.aborted ? reasonText(signal) : networkErrorText(error)
        }`,
        cause: error,
      });
    }
    const success = response.status >= 200 && response.status < 300;
    const source = `Redfish BMC ${this.origin}: ${method} ${path}`;
    let parsed: unknown;
    try {
      parsed = await readBoundedJson(response, {
        source,
        // An error answer is read only for the BMC's words.
        maxBytes: success
          ? options.maxBytes ?? REDFISH_BODY_LIMITS.resource
          : REDFISH_BODY_LIMITS.errorAnswer,
        signal,
      });
    } catch (error) {
      // A read that succeeded needs its whole body: a cut, stalled, oversized or broken
      // one is an error, never an empty answer. A POST's status is its answer (the BMC
      // acted or refused), so its body is best effort; so is an error answer's.
      if (method === 'GET' && success) {
        throw new RedfishError({
          bmc: this.origin,
          status: response.status,
          outcome:
            error instanceof BoundedReadError && error.reason === 'deadline'
              ? 'unknown'
              : 'refused',
          message: bodyErrorText(source, error),
          cause: error,
        });
      }
      parsed = undefined;
    }
    return { status: response.status, headers: response.headers, body: parsed };
  }

  private answerError(
    method: string,
    path: string,
    answer: Answer,
    suffix = '',
    outcome: 'notSent' | 'refused' = 'refused',
  ): RedfishError {
    const reason = redfishErrorText(answer.body);
    return new RedfishError({
      bmc: this.origin,
      status: answer.status,
      outcome,
      message: `Redfish BMC ${
        this.origin
      }: ${method} ${path}${suffix} answered ${statusText(answer.status)}${
        reason ? `: ${reason}` : ''
      }`,
    });
  }
}

/** Why a signal aborted, for a message ("… passed its deadline of 60 s"). */
function reasonText(signal: AbortSignal): string {
  const reason = signal.reason as
    | { name?: string; message?: string }
    | undefined;
  if (reason?.name === 'TimeoutError') {
    return 'the request passed its deadline';
  }
  return reason?.message || 'aborted';
}

/** The message of a refused answer: names the BMC, the path and, when too large, the limit. */
function bodyErrorText(source: string, error: unknown): string {
  if (error instanceof BoundedReadError) {
    if (error.reason === 'tooLarge' && error.limitBytes !== undefined) {
      return `${source}: the answer is larger than the limit of ${byteText(
        error.limitBytes,
      )}; not read`;
    }
    if (error.reason === 'deadline') {
      const cause = error.cause as { name?: string; message?: string };
      return `${source}: the answer did not arrive in time (${
        cause?.name === 'TimeoutError'
          ? 'the request passed its deadline'
          : cause?.message ?? 'aborted'
      })`;
    }
    return error.message;
  }
  return `${source}: the answer could not be read: ${
    (error as Error)?.message ?? String(error)
  }`;
}
