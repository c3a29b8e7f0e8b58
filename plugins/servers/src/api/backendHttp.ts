import type { DiscoveryApi, FetchApi } from '@backstage/frontend-plugin-api';
import { ResponseError } from '@backstage/errors';

/**
 * Requests to the servers backend (plugin id `servers`) through the app's
 * discovery and fetch APIs, so they carry the user's Backstage token. A failed
 * response rejects with `errorOf(response)`: by default a `ResponseError` with
 * the backend's message; a client that knows a richer error passes its own.
 */
export class ServersBackendHttp {
  private readonly discoveryApi: Pick<DiscoveryApi, 'getBaseUrl'>;
  private readonly fetchApi: Pick<FetchApi, 'fetch'>;
  private readonly errorOf: (response: Response) => Promise<Error>;

  constructor(options: {
    discoveryApi: Pick<DiscoveryApi, 'getBaseUrl'>;
    fetchApi: Pick<FetchApi, 'fetch'>;
    errorOf?: (response: Response) => Promise<Error>;
  }) {
    this.discoveryApi = options.discoveryApi;
    this.fetchApi = options.fetchApi;
    this.errorOf =
      options.errorOf ?? (response => ResponseError.fromResponse(response));
  }

  /** GET `path` (below the backend's base URL) and its JSON answer. */
  get<T>(path: string): Promise<T> {
    return this.request(path);
  }

  /** POST `body` as JSON to `path` and its JSON answer. */
  post<T>(path: string, body: unknown): Promise<T> {
    return this.request(path, {
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
  }

  private async request<T>(path: string, init?: RequestInit): Promise<T> {
    const baseUrl = await this.discoveryApi.getBaseUrl('servers');
    const response = await this.fetchApi.fetch(`${baseUrl}${path}`, init);
    if (!response.ok) {
      throw await this.errorOf(response);
    }
    return (await response.json()) as T;
  }
}

/** One path segment, escaped. */
export function enc(part: string): string {
  return encodeURIComponent(part);
}
