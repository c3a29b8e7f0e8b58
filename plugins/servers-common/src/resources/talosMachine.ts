import { z } from 'zod';
import {
  conditionsSchema,
  objectNameSchema,
  observedGenerationSchema,
  requestFlagSchema,
  resourceDescriptor,
  timestampSchema,
} from './common';
import { racksideObjectSchema, type RacksideObject } from './object';
import type { CrdDefinition } from './crd';
import { immutable, kube, setOnce, withRules } from './kube';
import { talosAddressSchema } from './talosCluster';

/** Where TalosMachine lives in the API. */
export const talosMachineResource = resourceDescriptor({
  kind: 'TalosMachine',
  plural: 'talosmachines',
  shortNames: ['tm'],
  namespaced: true,
});

/** The phases of a discovered machine. */
export const TALOS_MACHINE_PHASES = [
  'Pending',
  'Joining',
  'Joined',
  'Failed',
] as const;
/** A TalosMachine phase. */
export type TalosMachinePhase = (typeof TALOS_MACHINE_PHASES)[number];

/** A lower-case SMBIOS UUID: the name of a TalosMachine. */
export const SMBIOS_UUID_REGEX =
  /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
/** {@link SMBIOS_UUID_REGEX} as text, for the CRD's CEL rule. */
export const SMBIOS_UUID_PATTERN = SMBIOS_UUID_REGEX.source;

/** `spec` of a TalosMachine. */
export const talosMachineSpecSchema = withRules(
  z.object({
    cluster: kube(objectNameSchema, {
      validations: [immutable('cluster')],
    }).describe('The TalosCluster (same namespace) whose discovery found it.'),
    join: requestFlagSchema
      .optional()
      .describe(
        'Set (once) to add the machine to the cluster: the operator applies the join config.',
      ),
  }),
  [setOnce('join')],
).describe('Which cluster found the machine, and the request to add it.');

/** `status` of a TalosMachine. */
export const talosMachineStatusSchema = z
  .object({
    phase: z.enum(TALOS_MACHINE_PHASES).optional(),
    address: talosAddressSchema
      .optional()
      .describe('Where the machine answered last.'),
    hostname: z.string().max(253).optional(),
    lastSeenAt: timestampSchema.optional(),
    configAppliedAt: timestampSchema
      .optional()
      .describe('When the join config was applied.'),
    nodeName: objectNameSchema
      .optional()
      .describe('The Node with this system UUID, once it exists.'),
    joinedAt: timestampSchema.optional(),
    message: z.string().max(4096).optional(),
    conditions: conditionsSchema.optional(),
    observedGeneration: observedGenerationSchema,
  })
  .describe('What the operator saw and did.');

/** A TalosMachine, as read from the apiserver. */
export const talosMachineSchema = withRules(
  racksideObjectSchema(
    'TalosMachine',
    talosMachineSpecSchema,
    talosMachineStatusSchema,
  ),
  [
    {
      rule: `self.metadata.name.matches('${SMBIOS_UUID_PATTERN}')`,
      message: 'a TalosMachine is named by its SMBIOS UUID (lower case)',
      check: m => SMBIOS_UUID_REGEX.test(m.metadata.name),
    },
  ],
).describe(
  'A machine discovery found (named by its SMBIOS UUID); spec.join asks the operator to add it.',
);

/** A TalosMachine (defaults applied). */
export type TalosMachine = RacksideObject<
  'TalosMachine',
  TalosMachineSpec,
  TalosMachineStatus
>;
/** A TalosMachine as written. */
export type TalosMachineInput = z.input<typeof talosMachineSchema>;
export type TalosMachineSpec = z.infer<typeof talosMachineSpecSchema>;
export type TalosMachineStatus = z.infer<typeof talosMachineStatusSchema>;

export const talosMachineCrd: CrdDefinition = {
  resource: talosMachineResource,
  schema: talosMachineSchema,
  printerColumns: [
    { name: 'Cluster', type: 'string', jsonPath: '.spec.cluster' },
    { name: 'Address', type: 'string', jsonPath: '.status.address' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Node', type: 'string', jsonPath: '.status.nodeName' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};
