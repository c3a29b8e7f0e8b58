export { createWatchCache } from './WatchCache';
export type {
  WatchCache,
  WatchCacheEvents,
  WatchCacheLogger,
  WatchCacheOptions,
  WatchCacheStatus,
} from './WatchCache';
export { kubeWatchTransport } from './transport';
export type {
  ListPage,
  ListRequest,
  RawWatchEvent,
  WatchHandle,
  WatchHandlers,
  WatchRequest,
  WatchTransport,
} from './transport';
