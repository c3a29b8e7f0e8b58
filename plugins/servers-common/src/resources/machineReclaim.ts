import { z } from 'zod';
import {
  conditionsSchema,
  localSecretRefSchema,
  objectNameSchema,
  observedGenerationSchema,
  RACKSIDE_API_VERSION,
  reasonSchema,
  requesterSchema,
  resourceDescriptor,
  timestampSchema,
} from './common';
import { racksideObjectSchema, type RacksideObject } from './object';
import type { CrdDefinition } from './crd';
import {
  fixedAtCreation,
  immutable,
  kube,
  setOnce,
  terminalPhaseIsFinal,
  withRules,
} from './kube';
import { talosAddressSchema } from './talosCluster';

/** Where MachineReclaim lives in the API. */
export const machineReclaimResource = resourceDescriptor({
  kind: 'MachineReclaim',
  plural: 'machinereclaims',
  shortNames: ['mr'],
  namespaced: true,
});

/** The custom RBAC verb on `machinereclaims` the admission webhook checks. */
export const MACHINE_RECLAIM_VERB = 'reclaim';

/** The phases of a reclaim (decision 0002). */
export const MACHINE_RECLAIM_PHASES = [
  'Pending',
  'AwaitingConfirmation',
  'Resetting',
  'WaitingForMaintenance',
  'Done',
  'Failed',
  'Expired',
  'Refused',
] as const;
/** A MachineReclaim phase. */
export type MachineReclaimPhase = (typeof MACHINE_RECLAIM_PHASES)[number];

/** The phases a reclaim never leaves. */
export const TERMINAL_MACHINE_RECLAIM_PHASES: readonly MachineReclaimPhase[] = [
  'Done',
  'Failed',
  'Expired',
  'Refused',
];

/** Whether a reclaim in this phase is finished. */
export function isTerminalReclaimPhase(phase: MachineReclaimPhase): boolean {
  return TERMINAL_MACHINE_RECLAIM_PHASES.includes(phase);
}

/**
 * The label on a reclaim's credential Secret naming its request. The operator reads and
 * deletes a credential only if it carries this label with the request's name and is
 * owned by that MachineReclaim (same uid); see {@link credentialNotBound}.
 */
export const CREDENTIAL_OF_LABEL = 'rackside.dev/credential-of';

/** The key of the credential in its Secret (the CRD's default). */
export const CREDENTIAL_KEY = 'talosconfig';

/**
 * The name of a reclaim's credential Secret: the only name `spec.credentialSecretRef.name`
 * may have (a CEL rule on the CRD), and the name the backend gives the Secret.
 */
export function credentialSecretName(reclaimName: string): string {
  return `${reclaimName}-talosconfig`;
}

/** `spec.ttlMinutes`: default, and the bounds the apiserver enforces. */
export const RECLAIM_TTL_MINUTES = { default: 15, min: 1, max: 60 } as const;

/** Accepted in `spec.confirmUUID`; compare case-insensitively with the machine's UUID. */
const uuidSchema = z
  .string()
  .regex(
    /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
  );

/** `spec` of a MachineReclaim: fixed at creation, except `confirmUUID` (set once). */
export const machineReclaimSpecSchema = withRules(
  z.object({
    address: kube(talosAddressSchema, {
      validations: [immutable('address')],
    }).describe('The address of the machine another Talos cluster holds.'),
    targetCluster: kube(objectNameSchema, {
      validations: [immutable('targetCluster')],
    }).describe('The TalosCluster (same namespace) to add the machine to.'),
    credentialSecretRef: kube(
      localSecretRefSchema('talosconfig', "the foreign cluster's talosconfig"),
      { validations: [immutable('credentialSecretRef')] },
    ).describe(
      "The foreign cluster's talosconfig, single use: deleted at the reset or at expiry.",
    ),
    ttlMinutes: kube(
      z
        .number()
        .int()
        .min(RECLAIM_TTL_MINUTES.min)
        .max(RECLAIM_TTL_MINUTES.max)
        .default(RECLAIM_TTL_MINUTES.default),
      { validations: [immutable('ttlMinutes')] },
    ).describe(
      'Minutes the request (and its credential) may wait for confirmation before the reset; then Expired. 1 to 60, default 15.',
    ),
    confirmUUID: uuidSchema
      .optional()
      .describe(
        "The machine's UUID, typed by the user to confirm the reset. Set once.",
      ),
    requestedBy: requesterSchema.optional().describe('Who asked.'),
    reason: reasonSchema.optional(),
  }),
  [
    setOnce('confirmUUID'),
    fixedAtCreation('requestedBy'),
    fixedAtCreation('reason'),
  ],
).describe('Reset a machine another Talos cluster holds, and add it here.');

/** `status` of a MachineReclaim. */
export const machineReclaimStatusSchema = withRules(
  z.object({
    phase: z.enum(MACHINE_RECLAIM_PHASES).optional(),
    machineUUID: z
      .string()
      .max(64)
      .optional()
      .describe('The UUID read through the foreign talosconfig.'),
    expiresAt: timestampSchema
      .optional()
      .describe(
        'Creation plus ttlMinutes: the reset must be confirmed before.',
      ),
    confirmedAt: timestampSchema.optional(),
    resetRecordedAt: timestampSchema
      .optional()
      .describe(
        'When the operator recorded that it is about to send the reset (before the call; set once).',
      ),
    resetSentAt: timestampSchema.optional(),
    credentialDeletedAt: timestampSchema.optional(),
    credentialLeftAt: timestampSchema
      .optional()
      .describe(
        'When the operator found that the Secret spec.credentialSecretRef names is not bound to this request (ownerReference with its uid, label rackside.dev/credential-of) and left it untouched: never read, never deleted.',
      ),
    result: z
      .string()
      .max(4096)
      .optional()
      .describe(
        'The outcome, in words (e.g. the DHCP hint of a Failed request).',
      ),
    audit: z
      .array(
        z.object({
          at: timestampSchema,
          event: z
            .string()
            .min(1)
            .max(128)
            .describe(
              'What happened, as the Event reason (e.g. CredentialDeleted).',
            ),
          message: z.string().max(4096).optional(),
          actor: z.string().max(512).optional(),
        }),
      )
      .max(100)
      .optional()
      .describe('Every step, oldest first (also emitted as Events).'),
    conditions: conditionsSchema.optional(),
    observedGeneration: observedGenerationSchema,
  }),
  [
    terminalPhaseIsFinal(TERMINAL_MACHINE_RECLAIM_PHASES, 'a reclaim'),
    setOnce('resetRecordedAt'),
  ],
).describe('Progress of the reclaim.');

/**
 * The credential binding (issue 15, docs/architecture.md, "Adding machines"): `spec.credentialSecretRef.name` is the
 * name the backend gives the request's Secret, so a request written with kubectl cannot
 * point the operator at another Secret (this cluster's own talosconfig, say).
 */
const CREDENTIAL_NAME_SUFFIX = credentialSecretName('');

/** A MachineReclaim, as read from the apiserver. */
export const machineReclaimSchema = withRules(
  racksideObjectSchema(
    'MachineReclaim',
    machineReclaimSpecSchema,
    machineReclaimStatusSchema,
  ),
  [
    {
      rule: `self.spec.credentialSecretRef.name == self.metadata.name + '${CREDENTIAL_NAME_SUFFIX}'`,
      messageExpression: `'spec.credentialSecretRef.name must be ' + self.metadata.name + '${CREDENTIAL_NAME_SUFFIX}, the credential Secret the backend creates for this request'`,
      message: `spec.credentialSecretRef.name must be <metadata.name>${CREDENTIAL_NAME_SUFFIX}, the credential Secret the backend creates for this request`,
      fieldPath: '.spec.credentialSecretRef.name',
      check: mr =>
        mr.spec.credentialSecretRef.name ===
        credentialSecretName(mr.metadata.name),
    },
  ],
).describe(
  'Reset and add (decision 0002): reset a machine another Talos cluster configured and add it to a TalosCluster here.',
);

/** What the operator needs of a Secret's metadata to judge whether it is a request's credential. */
export interface CredentialSecretMeta {
  labels?: Record<string, string>;
  ownerReferences?: Array<{
    apiVersion?: string;
    kind?: string;
    name?: string;
    uid?: string;
  }>;
}

/**
 * Why a Secret is not the credential of this request, or an empty list when it is: it
 * must be owned by the MachineReclaim (apiVersion, kind, name and uid) and carry
 * {@link CREDENTIAL_OF_LABEL} with its name. The backend writes exactly that shape; the
 * operator reads and deletes nothing else.
 */
export function credentialNotBound(
  secret: CredentialSecretMeta,
  reclaim: { name: string; uid?: string },
): string[] {
  const problems: string[] = [];
  const owned = (secret.ownerReferences ?? []).some(
    ref =>
      ref.apiVersion === RACKSIDE_API_VERSION &&
      ref.kind === machineReclaimResource.kind &&
      ref.name === reclaim.name &&
      !!reclaim.uid &&
      ref.uid === reclaim.uid,
  );
  if (!owned) {
    problems.push(
      `it has no ownerReference to MachineReclaim ${reclaim.name} (uid ${
        reclaim.uid ?? 'unknown'
      })`,
    );
  }
  if (secret.labels?.[CREDENTIAL_OF_LABEL] !== reclaim.name) {
    problems.push(`no label ${CREDENTIAL_OF_LABEL}=${reclaim.name}`);
  }
  return problems;
}

/** A MachineReclaim (defaults applied). */
export type MachineReclaim = RacksideObject<
  'MachineReclaim',
  MachineReclaimSpec,
  MachineReclaimStatus
>;
/** A MachineReclaim as written. */
export type MachineReclaimInput = z.input<typeof machineReclaimSchema>;
export type MachineReclaimSpec = z.infer<typeof machineReclaimSpecSchema>;
export type MachineReclaimStatus = z.infer<typeof machineReclaimStatusSchema>;
export type MachineReclaimAuditEntry = NonNullable<
  MachineReclaimStatus['audit']
>[number];

export const machineReclaimCrd: CrdDefinition = {
  resource: machineReclaimResource,
  schema: machineReclaimSchema,
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.spec.address' },
    { name: 'Cluster', type: 'string', jsonPath: '.spec.targetCluster' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'UUID', type: 'string', jsonPath: '.status.machineUUID' },
    { name: 'Expires', type: 'date', jsonPath: '.status.expiresAt' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    {
      name: 'Requester',
      type: 'string',
      jsonPath: '.spec.requestedBy',
      priority: 1,
    },
    { name: 'Result', type: 'string', jsonPath: '.status.result', priority: 1 },
  ],
};
