/** A JSON answer of the backend as `fetch` would resolve it (the clients read it once). */
export function jsonResponse(status: number, body: unknown, statusText = 'OK') {
  const text = JSON.stringify(body);
  return {
    ok: status >= 200 && status < 300,
    status,
    statusText,
    url: 'http://backend/api/servers/x',
    headers: {
      get: (n: string) =>
        n.toLowerCase() === 'content-type' ? 'application/json' : null,
    },
    json: async () => JSON.parse(text),
    text: async () => text,
  } as unknown as Response;
}

/**
 * The app's discovery and fetch APIs for a client under test: the backend is at
 * http://backend/api/servers and every request answers `response`.
 */
export function fakeBackendApis(response: Response) {
  const fetch = jest.fn(async (_url: string, _init?: RequestInit) => response);
  const discoveryApi = {
    getBaseUrl: jest.fn(async () => 'http://backend/api/servers'),
  };
  return { fetch, discoveryApi, fetchApi: { fetch } as any };
}
