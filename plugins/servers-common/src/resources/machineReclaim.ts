import { z } from 'zod';
import {
  conditionsSchema,
  localSecretRefSchema,
  objectMetaSchema,
  objectNameSchema,
  observedGenerationSchema,
  RACKSIDE_API_VERSION,
  reasonSchema,
  requesterSchema,
  resourceDescriptor,
  timestampSchema,
} from './common';
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

/** The phases of a reclaim (ADR 0107). */
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

/** A MachineReclaim, as read from the apiserver. */
export const machineReclaimSchema = z
  .object({
    apiVersion: z.literal(RACKSIDE_API_VERSION),
    kind: z.literal('MachineReclaim'),
    metadata: objectMetaSchema,
    spec: machineReclaimSpecSchema,
    status: machineReclaimStatusSchema.optional(),
  })
  .describe(
    'Reset and add (ADR 0107): reset a machine another Talos cluster configured and add it to a TalosCluster here.',
  );

/** A MachineReclaim (defaults applied). */
export type MachineReclaim = z.infer<typeof machineReclaimSchema>;
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
