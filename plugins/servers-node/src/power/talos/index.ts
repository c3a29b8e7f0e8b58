export { TalosApiClient, TalosApiError } from './TalosApiClient';
export type {
  TalosActionAck,
  TalosApiClientOptions,
  TalosApplyResult,
  TalosConnection,
  TalosEtcdMember,
  TalosResetOptions,
  TalosUpgradeOptions,
  TalosVersion,
} from './TalosApiClient';
export { normalizeTalosKey, parseTalosconfig } from './talosconfig';
export type { TalosClientIdentity, Talosconfig } from './talosconfig';
export { parseTalosEndpoint, TALOS_API_PORT } from './endpoint';
export type { TalosEndpoint } from './endpoint';
export { dnsResolver, reachFor } from './reach';
export type { Reach, ResolveName } from './reach';
export { probeFailureAnswered, probeTalosMachine } from './probe';
export type { TalosProbeOptions, TalosProbeResult } from './probe';
export { TalosPowerChannel, talosFailureOutcome } from './TalosPowerChannel';
export type { TalosPowerChannelOptions } from './TalosPowerChannel';
