import { z } from 'zod';
import {
  conditionsSchema,
  credentialsSecretRefSchema,
  observedGenerationSchema,
  resourceDescriptor,
  timestampSchema,
} from './common';
import { racksideObjectSchema, type RacksideObject } from './object';
import type { CrdDefinition } from './crd';
import { MAX_FIRMWARE_URI_LENGTH } from '../rules/firmwareSources';

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
    healthRefresh: z
      .object({
        requestedAt: timestampSchema.describe(
          'When the reading was asked for.',
        ),
        requestedBy: z
          .string()
          .max(256)
          .describe('Who asked (a Backstage entity ref or a Kubernetes user).'),
      })
      .optional()
      .describe(
        'A request for a health reading now; the operator answers it by setting status.health.answeredRequestAt to its requestedAt.',
      ),
  })
  .describe("How to reach the node's BMC.");

/** The health a BMC reports, worst last; `Unknown` when never read successfully. */
export const HEALTH_ROLLUPS = ['OK', 'Warning', 'Critical', 'Unknown'] as const;
/** A health rollup. */
export type HealthRollup = (typeof HEALTH_ROLLUPS)[number];
/** The health of one part or one log entry, as Redfish's `Status.Health` says it. */
export const PART_HEALTHS = ['OK', 'Warning', 'Critical'] as const;
/** Redfish's Status.Health. */
export type PartHealth = (typeof PART_HEALTHS)[number];
/** What kind of part a reading names. */
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
/** Which log service an entry came from. */
export const LOG_ENTRY_SERVICES = ['System', 'Manager'] as const;

/** The bounds of `status.health`: the CRD rejects more, the operator truncates to them. */
export const HEALTH_LIMITS = {
  parts: 32,
  partName: 128,
  partState: 64,
  partMessage: 256,
  logEntries: 20,
  logEntryId: 64,
  logEntryMessage: 512,
  firmware: 64,
  firmwareName: 128,
  firmwareVersion: 128,
  missing: 16,
  missingName: 64,
  state: 64,
  error: 1024,
} as const;

/** One entry of a BMC's log service (SEL). */
export const bmcLogEntrySchema = z
  .object({
    id: z.string().max(HEALTH_LIMITS.logEntryId).describe("The entry's Id."),
    created: timestampSchema.describe('When the BMC wrote it.'),
    severity: z.enum(PART_HEALTHS),
    message: z.string().max(HEALTH_LIMITS.logEntryMessage),
    service: z
      .enum(LOG_ENTRY_SERVICES)
      .describe("The system's or the manager's log service."),
  })
  .describe('One log entry.');

/** Entries of the log services, newest first. */
export const bmcLogEntriesSchema = z
  .array(bmcLogEntrySchema)
  .max(HEALTH_LIMITS.logEntries);

/** `status.health` of a ServerBMC: what the BMC said at the last reading. */
export const serverHealthSchema = z
  .object({
    rollup: z
      .enum(HEALTH_ROLLUPS)
      .describe(
        "The worst of the system's Status.HealthRollup/Health and every part read; Unknown when never read successfully.",
      ),
    state: z
      .string()
      .max(HEALTH_LIMITS.state)
      .optional()
      .describe("The system's Status.State."),
    readAt: timestampSchema
      .optional()
      .describe('When the last successful reading ended.'),
    error: z
      .string()
      .max(HEALTH_LIMITS.error)
      .optional()
      .describe('Why the last reading failed; cleared by a successful one.'),
    sweepIntervalSeconds: z
      .number()
      .int()
      .min(1)
      .max(7 * 24 * 3600)
      .optional()
      .describe(
        "The operator's sweep interval when it wrote this reading: a reading older than two of them, or with an error, is unknown (docs/hardware-health.md).",
      ),
    answeredRequestAt: timestampSchema
      .optional()
      .describe(
        'The spec.healthRefresh.requestedAt the last reading answered.',
      ),
    attemptedRequestAt: timestampSchema
      .optional()
      .describe(
        'The spec.healthRefresh.requestedAt a reading started to answer: one still unanswered at the next start never ended, and is answered with an error instead of read again.',
      ),
    parts: z
      .array(
        z.object({
          kind: z.enum(HEALTH_PART_KINDS),
          name: z.string().max(HEALTH_LIMITS.partName),
          health: z.enum(PART_HEALTHS),
          state: z.string().max(HEALTH_LIMITS.partState).optional(),
          message: z.string().max(HEALTH_LIMITS.partMessage).optional(),
        }),
      )
      .max(HEALTH_LIMITS.parts)
      .describe('The parts whose health is not OK.'),
    logEntries: bmcLogEntriesSchema.describe(
      "The newest entries of the system's and the manager's log services, newest first.",
    ),
    logEntriesSkipped: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        'Log entries the BMC listed that the reading did not look at (pages past its page budget, or entries listed only by link beyond those read; at least this many when the BMC gives no count). 0: every entry was considered (docs/hardware-health.md, "Limits").',
      ),
    firmware: z
      .array(
        z.object({
          id: z
            .string()
            .max(HEALTH_LIMITS.firmwareName)
            .optional()
            .describe(
              "The component's @odata.id (what a firmware update's targets name).",
            ),
          name: z.string().max(HEALTH_LIMITS.firmwareName),
          version: z.string().max(HEALTH_LIMITS.firmwareVersion),
          updateable: z.boolean(),
        }),
      )
      .max(HEALTH_LIMITS.firmware)
      .describe('The firmware inventory: component, version, updateable.'),
    missing: z
      .array(z.string().max(HEALTH_LIMITS.missingName))
      .max(HEALTH_LIMITS.missing)
      .describe(
        'Resources the BMC does not offer (e.g. FirmwareInventory, LogServices, Power, Thermal, Storage).',
      ),
  })
  .describe('What the BMC says of the hardware, bounded.');

/** At most this many entries of `status.firmwareHistory` on a ServerBMC (oldest dropped). */
export const MAX_FIRMWARE_HISTORY = 20;
/** At most this many components one history entry lists. */
export const MAX_FIRMWARE_HISTORY_COMPONENTS = 16;

/** One firmware update that ended, as the ServerBMC's `status.firmwareHistory` keeps it. */
export const firmwareHistoryEntrySchema = z
  .object({
    at: timestampSchema.describe('When the maintenance ended.'),
    maintenance: z
      .string()
      .min(1)
      .max(253)
      .describe('The NodeMaintenance that sent the update.'),
    uid: z
      .string()
      .max(128)
      .optional()
      .describe(
        "The NodeMaintenance's uid (an entry is written once per uid).",
      ),
    imageURI: z.string().min(1).max(MAX_FIRMWARE_URI_LENGTH),
    result: z.enum(['Complete', 'Failed']),
    components: z
      .array(
        z.object({
          id: z.string().min(1).max(HEALTH_LIMITS.firmwareName),
          before: z.string().max(HEALTH_LIMITS.firmwareVersion).optional(),
          after: z.string().max(HEALTH_LIMITS.firmwareVersion).optional(),
        }),
      )
      .max(MAX_FIRMWARE_HISTORY_COMPONENTS),
  })
  .describe('One firmware update of this BMC that ended.');

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
    firmwareHistory: z
      .array(firmwareHistoryEntrySchema)
      .max(MAX_FIRMWARE_HISTORY)
      .optional()
      .describe(
        'The firmware updates of this BMC that ended (Complete, or Failed after the update was sent), oldest first; the last 20 are kept.',
      ),
  })
  .describe('What the operator resolved and read.');

/** A ServerBMC, as read from the apiserver. */
export const serverBmcSchema = racksideObjectSchema(
  'ServerBMC',
  serverBmcSpecSchema,
  serverBmcStatusSchema,
).describe(
  'The BMC of one node (the object is named after the Node). Only the redfish power channel uses it.',
);

/** A ServerBMC (defaults applied). */
export type ServerBMC = RacksideObject<
  'ServerBMC',
  ServerBMCSpec,
  ServerBMCStatus
>;
/** A ServerBMC as written. */
export type ServerBMCInput = z.input<typeof serverBmcSchema>;
export type ServerBMCSpec = z.infer<typeof serverBmcSpecSchema>;
export type ServerBMCStatus = z.infer<typeof serverBmcStatusSchema>;
/** `status.health` of a ServerBMC. */
export type ServerHealth = z.infer<typeof serverHealthSchema>;
/** One part that is not OK. */
export type ServerHealthPart = ServerHealth['parts'][number];
/** One firmware component. */
export type ServerFirmwareComponent = ServerHealth['firmware'][number];
/** One entry of a ServerBMC's `status.firmwareHistory`. */
export type FirmwareHistoryEntry = z.infer<typeof firmwareHistoryEntrySchema>;
/** One log-service entry. */
export type BmcLogEntry = z.infer<typeof bmcLogEntrySchema>;
/** A request for a reading. */
export type ServerHealthRefresh = NonNullable<ServerBMCSpec['healthRefresh']>;

export const serverBmcCrd: CrdDefinition = {
  resource: serverBmcResource,
  schema: serverBmcSchema,
  printerColumns: [
    { name: 'Address', type: 'string', jsonPath: '.spec.address' },
    { name: 'System', type: 'string', jsonPath: '.status.systemPath' },
    { name: 'Health', type: 'string', jsonPath: '.status.health.rollup' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};
