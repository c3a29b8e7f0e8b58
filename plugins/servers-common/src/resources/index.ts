/**
 * The Kubernetes API of Rackside (group `rackside.dev`, version `v1alpha1`): zod schemas
 * that are the one source of the TypeScript types and of the CRDs in `crds/`.
 *
 * The NodeMaintenance phase and intent lists (`MAINTENANCE_PHASES`,
 * `MAINTENANCE_INTENTS`, `isTerminalPhase`) and `POWER_PROVIDER_TYPES` are defined once
 * in `../quorum` and `../capability`; the schemas here use them.
 */
export {
  RACKSIDE_GROUP,
  RACKSIDE_VERSION,
  RACKSIDE_API_VERSION,
  RACKSIDE_CATEGORY,
  CONDITION_STATUSES,
  objectMetaSchema,
  conditionSchema,
  requestFlagSchema,
} from './common';
export type {
  RacksideResourceDescriptor,
  ObjectMeta,
  ConditionStatus,
  Condition,
  RequestFlag,
  LocalSecretRef,
  SecretRef,
  CredentialsSecretRef,
  ResourceList,
} from './common';
export { racksideObjectSchema } from './object';
export type { RacksideObject, RacksideObjectSchema } from './object';
export type { CelRule, CheckedCelRule, KubeSchemaExtensions } from './kube';
export type { JSONSchemaProps } from './openapi';
export { toOpenAPISchema } from './openapi';
export type {
  CrdDefinition,
  CustomResourceDefinition,
  PrinterColumn,
} from './crd';
export { renderCrd } from './crd';
export * from './nodeMaintenance';
export * from './upgrade';
export * from './firmware';
export * from './approval';
export * from './powerProvider';
export * from './serverBmc';
export * from './talosCluster';
export * from './talosMachine';
export * from './machineReclaim';
export * from './maintenancePlan';
export * from './definitions';
