/*
 * The Redfish firmware update a NodeMaintenance with intent `firmware` asks for, and what
 * the operator recorded of it (docs/upgrades.md, "Firmware"). Apart from nodeMaintenance.ts
 * so that a plan's body can carry the same request.
 */
import { z } from 'zod';
import { timestampSchema } from './common';
import { HEALTH_LIMITS } from './serverBmc';
import {
  FIRMWARE_CHECKSUM,
  MAX_FIRMWARE_URI_LENGTH,
} from '../rules/firmwareSources';

/** When the BMC applies an update: at once, or on the system's next reset. */
export const FIRMWARE_APPLY_TIMES = ['Immediate', 'OnReset'] as const;

/** At most this many components one update names. */
export const MAX_FIRMWARE_TARGETS = 16;
/** At most this many of the task's messages are kept, each cut to 1024 characters. */
export const MAX_FIRMWARE_TASK_MESSAGES = 8;

/** A FirmwareInventory member (or a system) as Redfish links it: `/redfish/v1/...`. */
const targetSchema = z.string().min(1).max(512);

/** `spec.firmware`: the image the BMC fetches with UpdateService.SimpleUpdate. */
export const firmwareRequestSchema = z
  .object({
    imageURI: z
      .string()
      .min(1)
      .max(MAX_FIRMWARE_URI_LENGTH)
      .describe(
        'The https URL of the firmware image the BMC fetches. The operator sends it only when its origin is one of its --firmware-sources.',
      ),
    targets: z
      .array(targetSchema)
      .max(MAX_FIRMWARE_TARGETS)
      .optional()
      .describe(
        'The FirmwareInventory members to update (their @odata.id, or their Id); absent: the ones the BMC chooses for the image. Done only when each of them reports a new version.',
      ),
    applyTime: z
      .enum(FIRMWARE_APPLY_TIMES)
      .optional()
      .describe(
        'Immediate (default): applied when the task completes. OnReset: applied at the reset the operator sends once the task completes.',
      ),
    version: z
      .string()
      .min(1)
      .max(HEALTH_LIMITS.firmwareVersion)
      .optional()
      .describe(
        'The version the image installs, as the FirmwareInventory reports it. Given: the update is Refused when every targeted component already reports it, Done only when they report it, and a plan skips the nodes already at it.',
      ),
    checksum: z
      .string()
      .regex(FIRMWARE_CHECKSUM)
      .optional()
      .describe(
        'sha256:<64 lowercase hex> of the image. Given: the operator fetches the image itself and refuses the update before anything is sent when its checksum differs.',
      ),
  })
  .describe('The Redfish firmware update (intent firmware only).');

/** One component of the BMC's FirmwareInventory, as recorded before and after. */
export const firmwareComponentSchema = z.object({
  id: z.string().min(1).max(HEALTH_LIMITS.firmwareName),
  name: z.string().max(HEALTH_LIMITS.firmwareName),
  version: z.string().max(HEALTH_LIMITS.firmwareVersion),
});

const inventorySchema = z
  .array(firmwareComponentSchema)
  .max(HEALTH_LIMITS.firmware);

/** `status.firmware`: the inventory before and after, and the BMC's task. */
export const firmwareStatusSchema = z
  .object({
    before: inventorySchema.describe(
      'The FirmwareInventory read before SimpleUpdate was recorded.',
    ),
    after: inventorySchema
      .optional()
      .describe('The FirmwareInventory read once the update was applied.'),
    taskUri: z
      .string()
      .max(512)
      .optional()
      .describe("The BMC's task monitor of the update."),
    taskState: z
      .string()
      .max(64)
      .optional()
      .describe("The task's TaskState as last read (Running, Completed, ...)."),
    percent: z.number().int().min(0).max(100).optional(),
    messages: z
      .array(z.string().max(1024))
      .max(MAX_FIRMWARE_TASK_MESSAGES)
      .optional()
      .describe("The task's messages as the BMC wrote them."),
    checkedAt: timestampSchema
      .optional()
      .describe('When the task was last read.'),
  })
  .describe(
    'The firmware update of this maintenance: the inventory before and after, and the task.',
  );

/** `spec.firmware` of a NodeMaintenance. */
export type FirmwareRequest = z.infer<typeof firmwareRequestSchema>;
/** `status.firmware` of a NodeMaintenance. */
export type FirmwareStatus = z.infer<typeof firmwareStatusSchema>;
/** One component of a FirmwareInventory. */
export type FirmwareComponent = z.infer<typeof firmwareComponentSchema>;
