import { z } from 'zod';
import {
  advertise,
  POWER_PROVIDER_TYPES,
  type PowerAdvertisement,
} from '../rules/capability';
import {
  conditionsSchema,
  credentialsSecretRefSchema,
  namespaceNameSchema,
  objectNameSchema,
  observedGenerationSchema,
  resourceDescriptor,
  secretKeySchema,
  secretRefSchema,
  type Condition,
} from './common';
import { racksideObjectSchema, type RacksideObject } from './object';
import type { CrdDefinition } from './crd';
import { withRules } from './kube';

/** Where PowerProvider lives in the API. */
export const powerProviderResource = resourceDescriptor({
  kind: 'PowerProvider',
  plural: 'powerproviders',
  shortNames: ['pp'],
  namespaced: false,
});

/** The one PowerProvider of a cluster has this name. */
export const POWER_PROVIDER_NAME = 'default';

/** The condition types the operator sets on the PowerProvider. */
export const POWER_PROVIDER_CONDITION_TYPES = ['Ready'] as const;
/** A PowerProvider condition type. */
export type PowerProviderConditionType =
  (typeof POWER_PROVIDER_CONDITION_TYPES)[number];

const caBundleRefSchema = z
  .object({
    kind: z
      .enum(['Secret', 'ConfigMap'])
      .default('Secret')
      .describe('Where the bundle is kept.'),
    namespace: namespaceNameSchema
      .optional()
      .describe("Namespace; default: the operator's namespace."),
    name: objectNameSchema,
    key: secretKeySchema.default('ca.crt'),
  })
  .describe("PEM bundle of the CAs that sign the BMCs' certificates.");

const redfishSchema = withRules(
  z.object({
    credentialsSecretRef: credentialsSecretRefSchema,
    caBundleRef: caBundleRefSchema.optional(),
    insecureSkipVerify: z
      .boolean()
      .default(false)
      .describe(
        "Do not verify the BMCs' certificates. Must be explicit: set it only when no CA bundle can be had.",
      ),
    readbackWindowSeconds: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .default(300)
      .describe(
        'How long after a shutdown the BMC is read for PowerState Off (PowerOffConfirmed). 0: never read.',
      ),
    readbackIntervalSeconds: z
      .number()
      .int()
      .min(1)
      .max(300)
      .default(5)
      .describe(
        'How often the BMC of that one machine is read during the window.',
      ),
  }),
  [
    {
      rule: 'has(self.caBundleRef) != self.insecureSkipVerify',
      message:
        'redfish needs exactly one of caBundleRef or insecureSkipVerify: true',
      check: r => (r.caBundleRef !== undefined) !== r.insecureSkipVerify,
    },
    {
      rule: 'self.readbackWindowSeconds == 0 || self.readbackIntervalSeconds <= self.readbackWindowSeconds',
      message: 'readbackIntervalSeconds cannot exceed readbackWindowSeconds',
      fieldPath: '.readbackIntervalSeconds',
      check: r =>
        r.readbackWindowSeconds === 0 ||
        r.readbackIntervalSeconds <= r.readbackWindowSeconds,
    },
  ],
).describe(
  "Redfish over each node's BMC (ServerBMC objects name the BMCs): reboot, shutdown, power-on, power-off readback.",
);

/** `spec` of the PowerProvider. */
export const powerProviderSpecSchema = withRules(
  z.object({
    type: z
      .enum(POWER_PROVIDER_TYPES)
      .default('none')
      .describe(
        'The power channel: none (no power verb anywhere), talos or redfish.',
      ),
    attendedRack: z
      .boolean()
      .default(false)
      .describe(
        'A person is at the rack: a shutdown is recoverable even without power-on.',
      ),
    talos: z
      .object({
        secretRef: secretRefSchema('talosconfig', 'a talosconfig'),
      })
      .optional()
      .describe('Talos machine API (reboot, shutdown; never power-on).'),
    redfish: redfishSchema.optional(),
  }),
  [
    {
      rule: "self.type != 'talos' || has(self.talos)",
      message: 'type talos needs spec.talos.secretRef (a talosconfig Secret)',
      fieldPath: '.talos',
      check: s => s.type !== 'talos' || s.talos !== undefined,
    },
    {
      rule: "self.type != 'redfish' || has(self.redfish)",
      message:
        'type redfish needs spec.redfish (credentialsSecretRef and a CA bundle or insecureSkipVerify)',
      fieldPath: '.redfish',
      check: s => s.type !== 'redfish' || s.redfish !== undefined,
    },
  ],
).describe("The deployment's power channel.");

/** `status` of the PowerProvider: what the channel advertises. */
export const powerProviderStatusSchema = z
  .object({
    reboot: z.boolean().default(false).describe('The channel can reboot.'),
    shutdown: z.boolean().default(false).describe('The channel can shut down.'),
    powerOn: z.boolean().default(false).describe('The channel can power on.'),
    confirmsPowerOff: z
      .boolean()
      .default(false)
      .describe('The channel can observe that a machine reached off.'),
    conditions: conditionsSchema.optional(),
    observedGeneration: observedGenerationSchema,
  })
  .describe('What the channel advertises, and whether it is Ready.');

/** The PowerProvider, as read from the apiserver. */
export const powerProviderSchema = withRules(
  racksideObjectSchema(
    'PowerProvider',
    powerProviderSpecSchema.prefault({
      type: 'none',
      attendedRack: false,
    }),
    powerProviderStatusSchema,
  ),
  [
    {
      rule: `self.metadata.name == '${POWER_PROVIDER_NAME}'`,
      message: `the PowerProvider must be named ${POWER_PROVIDER_NAME}: a cluster has one power channel`,
      check: p => p.metadata.name === POWER_PROVIDER_NAME,
    },
  ],
).describe(
  'The power channel of this cluster (one object, named default). Credentials are Secret references only.',
);

/** The PowerProvider (defaults applied). */
export type PowerProvider = RacksideObject<
  'PowerProvider',
  PowerProviderSpec,
  PowerProviderStatus
>;
/** A PowerProvider as written. */
export type PowerProviderInput = z.input<typeof powerProviderSchema>;
export type PowerProviderSpec = z.infer<typeof powerProviderSpecSchema>;
export type PowerProviderStatus = z.infer<typeof powerProviderStatusSchema>;
export type PowerProviderCondition = Condition<PowerProviderConditionType>;

/**
 * What the product may offer, read from the PowerProvider object: the status the operator
 * wrote, with the spec's `type` and `attendedRack`. No object, or a status not yet written
 * for the current spec, advertises nothing.
 */
export function powerAdvertisementOf(
  provider: PowerProvider | undefined,
): PowerAdvertisement {
  if (!provider) return advertise('none', { attendedRack: false });
  const { spec, status, metadata } = provider;
  const current =
    status !== undefined &&
    (metadata.generation === undefined ||
      status.observedGeneration === metadata.generation);
  return {
    type: spec.type,
    attendedRack: spec.attendedRack,
    reboot: current ? status.reboot : false,
    shutdown: current ? status.shutdown : false,
    powerOn: current ? status.powerOn : false,
    confirmsPowerOff: current ? status.confirmsPowerOff : false,
  };
}

export const powerProviderCrd: CrdDefinition = {
  resource: powerProviderResource,
  schema: powerProviderSchema,
  printerColumns: [
    { name: 'Type', type: 'string', jsonPath: '.spec.type' },
    { name: 'Attended', type: 'boolean', jsonPath: '.spec.attendedRack' },
    { name: 'Reboot', type: 'boolean', jsonPath: '.status.reboot' },
    { name: 'Shutdown', type: 'boolean', jsonPath: '.status.shutdown' },
    { name: 'Power-On', type: 'boolean', jsonPath: '.status.powerOn' },
    {
      name: 'Ready',
      type: 'string',
      jsonPath: '.status.conditions[?(@.type=="Ready")].status',
    },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
  ],
};
