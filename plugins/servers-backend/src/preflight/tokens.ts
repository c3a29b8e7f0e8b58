/*
 * Pre-flight acknowledgement tokens: a token binds what one user was shown, recently,
 * and names the NodeMaintenance its request creates, so a token acts once. The servers'
 * action requests and the plans' creation and renewal check them alike.
 */
import { InputError } from '@backstage/errors';
import type { PreflightResponse } from '@rackside/plugin-servers-common';
import crypto from 'node:crypto';
import {
  digestOf,
  PreflightConflictError,
  type PreflightImpact,
} from './preflight';

/** How long an acknowledged pre-flight stays valid. */
export const PREFLIGHT_MAX_AGE_MS = 15 * 60 * 1000;

interface TokenPayload {
  v: 1;
  /** Who the pre-flight was shown to. */
  u: string;
  d: string;
  t: number;
}

/**
 * The name of the NodeMaintenance a request with this pre-flight token creates: the same
 * for every request carrying the token, so the apiserver's unique names make a token
 * single-use. Why on the object rather than a "used" table in the plugin's database:
 * the token is consumed by the very write that acts on it (atomic: a failed create burns
 * nothing, a created maintenance always marks its token), every backend replica already
 * shares the apiserver (a database shared by replicas is a deployment choice, an
 * in-memory SQLite is not shared), and two concurrent requests, on one replica or two,
 * cannot both create the same name: exactly one wins, the other gets AlreadyExists.
 * The hash keeps the token itself (which carries the user) out of the name.
 */
export function preflightMaintenanceName(
  node: string,
  intent: string,
  token: string,
): string {
  const digest = crypto
    .createHash('sha256')
    .update(token)
    .digest('hex')
    .slice(0, 16);
  const base = `${node}-${intent}`.slice(0, 253 - digest.length - 1);
  return `${base}-${digest}`;
}

/** The 409 message of a token that was used already. */
export function usedTokenMessage(maintenance: string): string {
  return `this pre-flight token was used already (maintenance ${maintenance}): a pre-flight acknowledges one request; review the current pre-flight and acknowledge it again`;
}

/**
 * Signs and checks pre-flight acknowledgement tokens: an HMAC over the impact digest,
 * the user and the time, so a token is bound to what this user was shown, recently.
 */
export class PreflightTokens {
  private readonly key: Buffer;
  /** Whether the key comes from config (else random to this process). */
  readonly shared: boolean;

  /** `secret`: shared by every replica of the backend; random per process without one. */
  constructor(secret?: string) {
    this.shared = Boolean(secret);
    this.key = secret
      ? crypto.createHash('sha256').update(secret).digest()
      : crypto.randomBytes(32);
  }

  private mac(body: string): string {
    return crypto
      .createHmac('sha256', this.key)
      .update(body)
      .digest('base64url');
  }

  /** A token binding `digest`, taken at `takenAt`, for `user`. */
  private tokenOf(digest: string, takenAt: string, user: string): string {
    const payload: TokenPayload = {
      v: 1,
      u: user,
      d: digest,
      t: Date.parse(takenAt),
    };
    const body = Buffer.from(JSON.stringify(payload)).toString('base64url');
    return `${body}.${this.mac(body)}`;
  }

  /** The pre-flight with its token for `user`. */
  sign(impact: PreflightImpact, user: string): PreflightResponse {
    return {
      ...impact,
      token: this.tokenOf(digestOf(impact), impact.takenAt, user),
    };
  }

  /**
   * A token for any digest of what a user was shown (the plan pre-flight binds every
   * node's impact with {@link impactDigest} and the plan's own fields).
   */
  signDigest(digest: string, takenAt: string, user: string): string {
    return this.tokenOf(digest, takenAt, user);
  }

  /**
   * Checks that `token` binds `current` (computed now) for `user`. A token that is not
   * ours or not this user's is a bad request (400); one whose impact changed or that is
   * too old is a conflict (409) carrying the new pre-flight. Answers when the
   * acknowledged snapshot was taken.
   */
  verify(
    token: string,
    current: PreflightImpact,
    user: string,
    now: Date,
  ): { takenAt: string } {
    return this.verifyDigest(token, digestOf(current), user, now, () =>
      this.sign(current, user),
    );
  }

  /**
   * {@link verify} for any digest: 400 for a token that is not ours or not this user's,
   * 409 (with `fresh()`, the current pre-flight) when it is too old or `digest` differs.
   */
  verifyDigest<P>(
    token: string,
    digest: string,
    user: string,
    now: Date,
    fresh: () => P,
  ): { takenAt: string } {
    const [body, mac] = token.split('.');
    const expected = body ? this.mac(body) : '';
    if (
      !body ||
      !mac ||
      mac.length !== expected.length ||
      !crypto.timingSafeEqual(Buffer.from(mac), Buffer.from(expected))
    ) {
      throw new InputError(
        'the pre-flight token is not valid: open the pre-flight again and acknowledge it',
      );
    }
    let payload: TokenPayload;
    try {
      payload = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
    } catch {
      throw new InputError('the pre-flight token is not valid');
    }
    if (payload.u !== user) {
      throw new InputError(
        'the pre-flight token was issued to another user: open the pre-flight yourself',
      );
    }
    if (now.getTime() - payload.t > PREFLIGHT_MAX_AGE_MS) {
      throw new PreflightConflictError<P>(
        `the acknowledged pre-flight is older than ${
          PREFLIGHT_MAX_AGE_MS / 60000
        } minutes: review the current impact and acknowledge it again`,
        fresh(),
      );
    }
    if (payload.d !== digest) {
      throw new PreflightConflictError<P>(
        'the impact changed since the pre-flight was acknowledged: review the new pre-flight and acknowledge it again',
        fresh(),
      );
    }
    return { takenAt: new Date(payload.t).toISOString() };
  }
}
