import { z } from 'zod';
import {
  conditionsSchema,
  credentialsSecretRefSchema,
  objectMetaSchema,
  observedGenerationSchema,
  RACKSIDE_API_VERSION,
  resourceDescriptor,
  timestampSchema,
} from './common';
import type { CrdDefinition } from './crd';

/** Where ServerBMC lives in the API. */
export const serverBmcResource = resourceDescriptor({
  kind: 'ServerBMC',
  plural: 'serverbmcs',
  shortNames: ['sbmc'],
  namespaced: false,
});

const systemPathSchema = z
  .string()
  .max(1024)
  .regex(/^\/redfish\/v1\/Systems\/[^/]+$/);

/** The health rollup of a server as its BMC reports it (Unknown: no reading could be made). */
export const HEALTH_ROLLUPS = ['OK', 'Warning', 'Critical', 'Unknown'] as const;
/** A health rollup. */
export type HealthRollup = (typeof HEALTH_ROLLUPS)[number];

/** The health of one part or log entry (Redfish `Status.Health`). */
export const PART_HEALTHS = ['OK', 'Warning', 'Critical'] as const;
/** The health of one part or log entry. */
export type PartHealth = (typeof PART_HEALTHS)[number];

/** The kinds of part a health reading names. */
export const HEALTH_PART_KINDS = [
  'System',
  'PowerSupply',
  'Fan',
  'Drive',
  'Temperature',
  'Other',
] as const;
/** A kind of part. */
export type HealthPartKind = (typeof HEALTH_PART_KINDS)[number];

/** A request for a health reading, written by the backend, answered by the operator. */
export const healthRefreshSchema = z
  .object({
    requestedAt: timestampSchema.describe('When the reading was asked for.'),
    requestedBy: z
      .string()
      .max(256)
      .describe('Who asked: a Backstage entity ref.'),
  })
  .describe(
    'A request for a health reading now (POST .../health/refresh, at most once a minute a server); the operator answers it in status.health.answeredRequestAt.',
  );

/** One part that is not OK. */
export const healthPartSchema = z.object({
  kind: z.enum(HEALTH_PART_KINDS),
  name: z.string().max(128).describe("The part's name as the BMC gives it."),
  health: z.enum(PART_HEALTHS),
  state: z.string().max(64).optional().describe('Redfish Status.State.'),
  message: z.string().max(256).optional(),
});

/** One entry of a BMC log service (SEL). */
export const healthLogEntrySchema = z.object({
  id: z.string().max(64),
  created: timestampSchema,
  severity: z.enum(PART_HEALTHS),
  message: z.string().max(512),
  service: z
    .enum(['System', 'Manager'])
    .describe("The log service: the system's or the manager's."),
});

/** One firmware component. */
export const firmwareComponentSchema = z.object({
  name: z.string().max(128),
  version: z.string().max(128),
  updateable: z.boolean(),
});

/** `status.health` of a ServerBMC: the newest reading, bounded in size. */
export const serverHealthSchema = z
  .object({
    rollup: z
      .enum(HEALTH_ROLLUPS)
      .describe(
        "The system's health rollup; Unknown when no reading could be made.",
      ),
    state: z.string().optional().describe("The system's Status.State."),
    readAt: timestampSchema.optional().describe('When the reading was made.'),
    error: z
      .string()
      .max(1024)
      .optional()
      .describe('Why the last reading failed, if it did.'),
    answeredRequestAt: timestampSchema
      .optional()
      .describe('The spec.healthRefresh.requestedAt this reading answered.'),
    parts: z
      .array(healthPartSchema)
      .max(32)
      .describe('The parts that are not OK.'),
    logEntries: z
      .array(healthLogEntrySchema)
      .max(20)
      .describe('The newest log entries, newest first.'),
    firmware: z
      .array(firmwareComponentSchema)
      .max(64)
      .describe('The firmware inventory.'),
    missing: z
      .array(z.string())
      .max(16)
      .describe('The resources this BMC does not offer (read without them).'),
  })
  .describe("What the node's BMC last said of its hardware.");

/** A ServerBMC's health reading. */
export type ServerHealth = z.infer<typeof serverHealthSchema>;
/** One part that is not OK. */
export type HealthPart = z.infer<typeof healthPartSchema>;
/** One BMC log entry. */
export type HealthLogEntry = z.infer<typeof healthLogEntrySchema>;
/** One firmware component. */
export type FirmwareComponent = z.infer<typeof firmwareComponentSchema>;
/** A request for a health reading. */
export type HealthRefresh = z.infer<typeof healthRefreshSchema>;

/** `spec` of a ServerBMC. */
export const serverBmcSpecSchema = z
  .object({
    address: z
      .string()
      .min(1)
      .max(2048)
      .regex(/^https?:\/\/[^\s/]+(\/[^\s]*)?$/)
      .describe(
        "Base URL of the BMC's Redfish service, e.g. https://10.0.5.21.",
      ),
    systemPath: systemPathSchema
      .optional()
      .describe(
        "The node's ComputerSystem, e.g. /redfish/v1/Systems/1. Absent: discovered, the system whose UUID is the node's system UUID.",
      ),
    credentialsSecretRef: credentialsSecretRefSchema
      .optional()
      .describe(
        "Credentials for this BMC only; default: the PowerProvider's redfish.credentialsSecretRef.",
      ),
    healthRefresh: healthRefreshSchema.optional(),
  })
  .describe("How to reach the node's BMC.");

/** `status` of a ServerBMC. */
export const serverBmcStatusSchema = z
  .object({
    systemPath: systemPathSchema
      .optional()
      .describe('The ComputerSystem in use (given or discovered).'),
    message: z.string().max(4096).optional(),
    conditions: conditionsSchema.optional(),
    observedGeneration: observedGenerationSchema,
    health: serverHealthSchema.optional(),
  })
  .describe('What the operator resolved.');

/** A ServerBMC, as read from the apiserver. */
export const serverBmcSchema = z
  .object({
    apiVersion: z.literal(RACKSIDE_API_VERSION),
    kind: z.literal('ServerBMC'),
    metadata: objectMetaSchema,
    spec: serverBmcSpecSchema,
    status: serverBmcStatusSchema.optional(),
  })
  .describe(
    'The BMC of one node (the object is named after the Node). Only the redfish power channel uses it.',
  );

/** A ServerBMC (defaults applied). */
export type ServerBMC = z.infer<typeof serverBmcSchema>;
/** A ServerBMC as written. */
export type ServerBMCInput = z.input<typeof serverBmcSchema>;
export type ServerBMCSpec = z.infer<typeof serverBmcSpecSchema>;
export type ServerBMCStatus = z.infer<typeof serverBmcStatusSchema>;

export const serverBmcCrd: CrdDefinition = {
  resource: serverBmcResource,
  schema: serverBmcSchema,
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.spec.address' },
    { name: 'System', type: 'string', jsonPath: '.status.systemPath' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};
