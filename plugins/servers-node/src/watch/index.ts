export { createWatchCache } from './WatchCache';
export * from './slim';
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
export { createClusterNodes, shownDigestOf, shownNodeOf } from './ClusterNodes';
export type {
  ClusterNodes,
  ClusterNodesEvents,
  ClusterNodesOptions,
  ShownNode,
} from './ClusterNodes';
export {
  clusterNodesServiceFactory,
  clusterNodesServiceRef,
  createClusterNodesService,
} from './clusterNodesService';
export type {
  ClusterNodesService,
  ClusterNodesServiceOptions,
} from './clusterNodesService';
