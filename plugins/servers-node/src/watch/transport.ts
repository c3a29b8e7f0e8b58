import type { KubeConfig } from '@kubernetes/client-node';
import { KubeHttp } from '../clients/kubeHttp';
import type { RawKubeObject } from '../clients/types';

/** One event line of a watch stream. */
export interface RawWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR' | string;
  object: RawKubeObject;
}

/** A list request of a watch cache. */
export interface ListRequest {
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  /** Aborted when the cache stops. */
  signal?: AbortSignal;
}

/** One page of a list answer. */
export interface ListPage {
  items: RawKubeObject[];
  resourceVersion: string;
  continue?: string;
  /** The list's kind, e.g. `NodeList`; used to fill in items' kind. */
  kind?: string;
  apiVersion?: string;
}

/** A watch request of a watch cache. */
export interface WatchRequest {
  path: string;
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion: string;
  timeoutSeconds: number;
  allowWatchBookmarks: boolean;
}

/** Callbacks of a watch. */
export interface WatchHandlers {
  onEvent(event: RawWatchEvent): void;
  /** The server accepted the watch (HTTP 200). */
  onOpen?(): void;
}

/** A watch in flight. */
export interface WatchHandle {
  /**
   * Resolves when the server ended the stream or it was aborted; rejects on
   * a non-200 answer (KubeApiError) or a broken connection.
   */
  done: Promise<void>;
  abort(): void;
}

/**
 * How a watch cache talks to the apiserver. The default goes over HTTP
 * ({@link kubeWatchTransport}); tests substitute a fake.
 */
export interface WatchTransport {
  list(request: ListRequest): Promise<ListPage>;
  watch(request: WatchRequest, handlers: WatchHandlers): WatchHandle;
}

/**
 * The apiserver transport: paginated GET for lists, a chunked
 * `?watch=true` GET for watches. `idleTimeoutMs` ends a watch that
 * has been silent that long (a half-open connection); the caller sets it
 * above the watch's `timeoutSeconds`.
 */
export function kubeWatchTransport(
  kubeConfig: KubeConfig | KubeHttp,
  options: { idleTimeoutMs?: (request: WatchRequest) => number } = {},
): WatchTransport {
  const http =
    kubeConfig instanceof KubeHttp ? kubeConfig : new KubeHttp(kubeConfig);
  return {
    async list(request) {
      const answer = await http.request<{
        kind?: string;
        apiVersion?: string;
        items?: RawKubeObject[];
        metadata?: { resourceVersion?: string; continue?: string };
      }>({
        method: 'GET',
        path: request.path,
        query: {
          labelSelector: request.labelSelector,
          fieldSelector: request.fieldSelector,
          limit: request.limit,
          continue: request.continue,
        },
        signal: request.signal,
      });
      return {
        items: answer.items ?? [],
        resourceVersion: answer.metadata?.resourceVersion ?? '',
        continue: answer.metadata?.continue || undefined,
        kind: answer.kind,
        apiVersion: answer.apiVersion,
      };
    },
    watch(request, handlers) {
      return http.stream(
        {
          method: 'GET',
          path: request.path,
          query: {
            watch: 'true',
            resourceVersion: request.resourceVersion,
            allowWatchBookmarks: request.allowWatchBookmarks || undefined,
            timeoutSeconds: request.timeoutSeconds,
            labelSelector: request.labelSelector,
            fieldSelector: request.fieldSelector,
          },
        },
        {
          onOpen: handlers.onOpen,
          onLine: line => handlers.onEvent(JSON.parse(line)),
          idleTimeoutMs:
            options.idleTimeoutMs?.(request) ??
            (request.timeoutSeconds + 30) * 1000,
        },
      );
    },
  };
}
