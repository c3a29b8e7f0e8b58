import { z } from 'zod';
import { uniqueList } from './kube';

/** The API group of every Rackside resource. */
export const RACKSIDE_GROUP = 'rackside.dev';
/** The served and stored version of every Rackside resource. */
export const RACKSIDE_VERSION = 'v1alpha1';
/** `apiVersion` of every Rackside object. */
export const RACKSIDE_API_VERSION = 'rackside.dev/v1alpha1';
/** The `kubectl get rackside` category every Rackside resource belongs to. */
export const RACKSIDE_CATEGORY = 'rackside';

/** Where a Rackside resource lives in the API: what a client needs to address it. */
export interface RacksideResourceDescriptor<K extends string = string> {
  group: typeof RACKSIDE_GROUP;
  version: typeof RACKSIDE_VERSION;
  apiVersion: typeof RACKSIDE_API_VERSION;
  kind: K;
  listKind: `${K}List`;
  plural: string;
  singular: string;
  shortNames: readonly string[];
  /** Namespaced (true) or cluster-scoped (false). */
  namespaced: boolean;
}

export function resourceDescriptor<K extends string>(d: {
  kind: K;
  plural: string;
  shortNames: readonly string[];
  namespaced: boolean;
}): RacksideResourceDescriptor<K> {
  return {
    group: RACKSIDE_GROUP,
    version: RACKSIDE_VERSION,
    apiVersion: RACKSIDE_API_VERSION,
    kind: d.kind,
    listKind: `${d.kind}List`,
    plural: d.plural,
    singular: d.kind.toLowerCase(),
    shortNames: d.shortNames,
    namespaced: d.namespaced,
  };
}

/** RFC 3339 timestamp, as Kubernetes writes `metav1.Time` (`2026-08-04T10:00:00Z`). */
export const timestampSchema = z.iso.datetime({ offset: true });

/** A Kubernetes object name (DNS subdomain). */
export const objectNameSchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/);

/** A namespace name (DNS label). */
export const namespaceNameSchema = z
  .string()
  .min(1)
  .max(63)
  .regex(/^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/);

/** Who asked: a Backstage entity ref (`user:default/jane`) or a Kubernetes user name. */
export const requesterSchema = z.string().min(1).max(512);

/** A human's reason: required, not blank. */
export const reasonSchema = z
  .string()
  .min(1)
  .max(1024)
  .regex(/\S/)
  .describe("Why, in the requester's words. Must not be blank.");

/** A Secret data key. */
export const secretKeySchema = z
  .string()
  .min(1)
  .max(253)
  .regex(/^[-._a-zA-Z0-9]+$/);

/** `metadata` of a Rackside object: the fields Rackside reads, the rest kept as is. */
export const objectMetaSchema = z
  .object({
    name: z.string(),
    generateName: z.string().optional(),
    namespace: z.string().optional(),
    uid: z.string().optional(),
    resourceVersion: z.string().optional(),
    generation: z.number().int().optional(),
    creationTimestamp: z.string().optional(),
    deletionTimestamp: z.string().optional(),
    labels: z.record(z.string(), z.string()).optional(),
    annotations: z.record(z.string(), z.string()).optional(),
    finalizers: z.array(z.string()).optional(),
    ownerReferences: z
      .array(
        z
          .object({
            apiVersion: z.string(),
            kind: z.string(),
            name: z.string(),
            uid: z.string(),
            controller: z.boolean().optional(),
            blockOwnerDeletion: z.boolean().optional(),
          })
          .loose(),
      )
      .optional(),
  })
  .loose();

/** The metadata of a Rackside object. */
export type ObjectMeta = z.infer<typeof objectMetaSchema>;

/** The status of a condition. */
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
/** A condition status. */
export type ConditionStatus = (typeof CONDITION_STATUSES)[number];

/** The standard `metav1.Condition`, with the apiserver's own bounds and patterns. */
export const conditionSchema = z.object({
  type: z
    .string()
    .max(316)
    .regex(
      new RegExp(
        '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$',
      ),
    )
    .describe('Type of condition in CamelCase, e.g. PowerOffConfirmed.'),
  status: z.enum(CONDITION_STATUSES),
  observedGeneration: z
    .number()
    .int()
    .min(0)
    .optional()
    .describe('The .metadata.generation the condition was set for.'),
  lastTransitionTime: timestampSchema.describe(
    'When the condition last changed status.',
  ),
  reason: z
    .string()
    .min(1)
    .max(1024)
    .regex(/^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$/)
    .describe('Programmatic reason for the last transition, in CamelCase.'),
  message: z
    .string()
    .max(32768)
    .describe('Human-readable detail of the last transition.'),
});

/** A condition on a Rackside object. */
export type Condition<T extends string = string> = Omit<
  z.infer<typeof conditionSchema>,
  'type'
> & { type: T };

/** `status.conditions`: a list-map keyed by `type`, as `metav1.Condition` lists are. */
export const conditionsSchema = uniqueList(z.array(conditionSchema).max(32), [
  'type',
]).describe('Current conditions, one per type.');

/** `status.observedGeneration`. */
export const observedGenerationSchema = z
  .number()
  .int()
  .min(0)
  .optional()
  .describe('The .metadata.generation the controller last acted on.');

/**
 * A request a human makes on an existing object (return to service, abandon, power on,
 * join): who, why, when. Set once; never changed or removed.
 */
export const requestFlagSchema = z.object({
  by: requesterSchema.describe(
    'Who asked: Backstage entity ref or Kubernetes user.',
  ),
  reason: reasonSchema,
  at: timestampSchema
    .optional()
    .describe('When it was asked (the Backstage backend always sets it).'),
});

/** A request flag. */
export type RequestFlag = z.infer<typeof requestFlagSchema>;

/** A Secret in the same namespace as the object that names it. */
export function localSecretRefSchema(defaultKey: string, what: string) {
  return z
    .object({
      name: objectNameSchema.describe('Name of the Secret.'),
      key: secretKeySchema
        .default(defaultKey)
        .describe(`Key in the Secret holding ${what}.`),
    })
    .describe(
      `A Secret in the object's namespace holding ${what} under key (default ${defaultKey}).`,
    );
}

/** A local Secret reference. */
export type LocalSecretRef = z.infer<ReturnType<typeof localSecretRefSchema>>;

/** A Secret named by a cluster-scoped object: namespace defaults to the operator's. */
export function secretRefSchema(defaultKey: string, what: string) {
  return z
    .object({
      namespace: namespaceNameSchema
        .optional()
        .describe(
          "Namespace of the Secret; default: the operator's namespace.",
        ),
      name: objectNameSchema.describe('Name of the Secret.'),
      key: secretKeySchema
        .default(defaultKey)
        .describe(`Key in the Secret holding ${what}.`),
    })
    .describe(`A Secret holding ${what} under key (default ${defaultKey}).`);
}

/** A Secret reference with a namespace. */
export type SecretRef = z.infer<ReturnType<typeof secretRefSchema>>;

/** Username and password in one Secret (BMC credentials). */
export const credentialsSecretRefSchema = z
  .object({
    namespace: namespaceNameSchema
      .optional()
      .describe("Namespace of the Secret; default: the operator's namespace."),
    name: objectNameSchema.describe('Name of the Secret.'),
    usernameKey: secretKeySchema
      .default('username')
      .describe('Key holding the user name.'),
    passwordKey: secretKeySchema
      .default('password')
      .describe('Key holding the password.'),
  })
  .describe(
    'A Secret with the BMC user name and password (keys username and password by default).',
  );

/** A credentials Secret reference. */
export type CredentialsSecretRef = z.infer<typeof credentialsSecretRefSchema>;

/** A Kubernetes list of Rackside objects, as a list call answers. */
export interface ResourceList<T> {
  apiVersion: string;
  kind: string;
  metadata: { resourceVersion?: string; continue?: string };
  items: T[];
}
