/*
 * A bearer token read from a file that is replaced while the process runs. Both kinds of
 * token an out-of-cluster portal is given expire: a projected ServiceAccount token (the
 * kubelet rewrites the file well before the expiry) and one written by `kubectl create
 * token` from a scheduled job. Reading the file once at start worked until the first
 * expiry, then every request was a 401.
 *
 * The file is looked at (stat) before each request and read again when it is another file
 * or was rewritten: no timer, no lag after a rotation, and a revoked old token is never
 * sent once the new one is on disk. A Kubernetes volume swaps a `..data` symlink, which
 * stat follows. A file that is missing or empty for a moment (a rewrite caught half-way)
 * keeps the last token until it has one again.
 */
import type { KubeConfig, User } from '@kubernetes/client-node';
import fs from 'node:fs';

/** The auth provider name a KubeConfig user carries to be authenticated by a token file. */
export const TOKEN_FILE_PROVIDER = 'rackside-token-file';

/** client-node's authenticator interface (not exported by the package). */
type Authenticator = Parameters<KubeConfig['addAuthenticator']>[0];
type RequestOptions = Parameters<Authenticator['applyAuthentication']>[1];

export class TokenFileAuthenticator implements Authenticator {
  private token: string;
  private seen: string;

  /** `token`: the file's content as read at start (config validation reads it once). */
  constructor(readonly file: string, token: string) {
    this.token = token;
    this.seen = this.stamp() ?? '';
  }

  isAuthProvider(user: User): boolean {
    return (
      user.authProvider?.name === TOKEN_FILE_PROVIDER &&
      user.authProvider.config?.tokenPath === this.file
    );
  }

  async applyAuthentication(_user: User, opts: RequestOptions): Promise<void> {
    // In place: the caller may hold on to its headers object.
    if (!opts.headers || Array.isArray(opts.headers)) opts.headers = {};
    (
      opts.headers as Record<string, string>
    ).Authorization = `Bearer ${this.current()}`;
  }

  /** The token to send now: the file's, read again if it changed. */
  current(): string {
    const stamp = this.stamp();
    if (stamp !== undefined && stamp !== this.seen) {
      let content = '';
      try {
        content = fs.readFileSync(this.file, 'utf8').trim();
      } catch {
        // Replaced between stat and read: the next request looks again.
      }
      if (content) {
        this.token = content;
        this.seen = stamp;
      }
    }
    return this.token;
  }

  private stamp(): string | undefined {
    try {
      const s = fs.statSync(this.file);
      return `${s.dev}:${s.ino}:${s.size}:${s.mtimeMs}:${s.ctimeMs}`;
    } catch {
      return undefined;
    }
  }
}
