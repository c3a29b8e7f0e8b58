/*
 * The Talos upgrade a NodeMaintenance with intent `upgrade` asks for, and what the
 * operator recorded of it (docs/upgrades.md). Apart from nodeMaintenance.ts so that a
 * plan's body can carry the same request.
 */
import { z } from 'zod';
import { timestampSchema } from './common';
import { MAX_IMAGE_REFERENCE_LENGTH } from '../rules/upgradeSources';

/** A Talos version, as an installer image's tag and a Node's osImage name it. */
const talosVersionSchema = z.string().min(1).max(80);

/** `spec.upgrade`: the installer image Talos installs, sent once with MachineService.Upgrade. */
export const upgradeRequestSchema = z
  .object({
    image: z
      .string()
      .min(1)
      .max(MAX_IMAGE_REFERENCE_LENGTH)
      .describe(
        'The Talos installer image, with its version as the tag (e.g. factory.talos.dev/installer/<schematic>:v1.12.0). The operator sends it only if it starts with one of its --talos-image-prefixes.',
      ),
    stage: z
      .boolean()
      .optional()
      .describe(
        'Stage the upgrade: Talos keeps the image and reboots at once to install it early in the next boot, before anything holds the disk.',
      ),
    force: z
      .boolean()
      .optional()
      .describe(
        "Skip Talos's own etcd health check before it upgrades a control-plane member. Only with the hazard ceremony.",
      ),
  })
  .describe('The Talos upgrade (intent upgrade only).');

/** `status.upgrade`: the versions before and after, as the operator saw them. */
export const upgradeStatusSchema = z
  .object({
    image: z
      .string()
      .min(1)
      .max(MAX_IMAGE_REFERENCE_LENGTH)
      .describe('The installer image the operator sent.'),
    toVersion: talosVersionSchema.describe(
      "The version the upgrade installs (the image's tag).",
    ),
    fromVersion: talosVersionSchema
      .optional()
      .describe(
        'The version the node ran when the upgrade was recorded (its osImage); absent when the Node did not name one.',
      ),
    sentAt: timestampSchema
      .optional()
      .describe('When Talos accepted the Upgrade.'),
    cameBackOn: talosVersionSchema
      .optional()
      .describe(
        'The version the node reported once it was back with a new boot ID.',
      ),
  })
  .describe(
    'The Talos upgrade of this maintenance: the versions before and after.',
  );

/** `spec.upgrade` of a NodeMaintenance. */
export type UpgradeRequest = z.infer<typeof upgradeRequestSchema>;
/** `status.upgrade` of a NodeMaintenance. */
export type UpgradeStatus = z.infer<typeof upgradeStatusSchema>;
