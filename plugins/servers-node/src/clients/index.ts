export { ResourceClient } from './ResourceClient';
export type {
  DeleteOptions,
  JsonPatchOperation,
  ListOptions,
  MergePatch,
  PatchOptions,
  ResourceClientOptions,
  ScopeOptions,
  WriteOptions,
} from './ResourceClient';
export { CoreClient, coreResources, FEW_NODES } from './core';
export { RacksideClient } from './rackside';
export type {
  EventInput,
  EventObject,
  EventSource,
  EvictionResult,
  NodeObject,
  NodesDrainInputs,
  PodDisruptionBudgetObject,
  PodObject,
  SecretObject,
} from './core';
export { KubeApiError, kubeErrorStatus, toBackstageError } from './errors';
export type { KubeStatus } from './errors';
export { KubeHttp, StreamIdleError } from './kubeHttp';
export { keepAliveAgent, shareKeepAliveAgents } from './agents';
export type {
  KubeQuery,
  KubeRequest,
  KubeStream,
  KubeStreamOptions,
} from './kubeHttp';
export { apiVersionOf, objectKey, resourcePath } from './types';
export type {
  KubeObject,
  KubeObjectMeta,
  RawKubeObject,
  ResourceDescriptor,
  Wire,
} from './types';
