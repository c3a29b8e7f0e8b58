/*
 * The request bodies of the `/api/servers` routes that change something, once: the
 * backend's routes and its registered actions parse with these schemas, and the
 * Servers page's clients send their input types. Messages say what is wrong, never
 * what was sent: a body may carry a credential.
 */
import { z } from 'zod';
import { parseDiscoveryEndpoint } from './rules/discoveryNetworks';
import { RECLAIM_TTL_MINUTES } from './resources/machineReclaim';
import {
  labelSelectorSchema,
  PLAN_REQUEST_INTENTS,
} from './resources/maintenancePlan';
import { talosAddressSchema } from './resources/talosCluster';
import {
  FIRMWARE_APPLY_TIMES,
  firmwareRequestSchema,
  MAX_FIRMWARE_TARGETS,
} from './resources/firmware';
import { upgradeRequestSchema } from './resources/upgrade';
import { MAX_IMAGE_REFERENCE_LENGTH } from './rules/upgradeSources';
import {
  FIRMWARE_CHECKSUM,
  MAX_FIRMWARE_URI_LENGTH,
} from './rules/firmwareSources';
import { HEALTH_LIMITS } from './resources/serverBmc';

/**
 * The message of a field's own type check: `missing` when the field is absent,
 * `wrongType` when it is there but not of its type.
 */
export function missingOr(missing: string, wrongType: string) {
  return (issue: { input?: unknown }) =>
    issue.input === undefined ? missing : wrongType;
}

/** A reason (the deployment's reason policy is checked after parsing). */
const reasonField = z.string({
  error: missingOr('reason is required', 'reason must be a string'),
});

// ---- Server actions -------------------------------------------------------------

/**
 * A healthy return asked for in a request (docs/alerts.md): the same bounds as the
 * CRDs' `spec.healthyReturn`, checked here so a bad one is a 400 naming the field and
 * nothing is written.
 */
export const healthyReturnBodySchema = z.strictObject(
  {
    healthyForSeconds: z
      .number({ error: 'healthyReturn.healthyForSeconds must be a number' })
      .int({ error: 'healthyReturn.healthyForSeconds must be a whole number' })
      .min(0, { error: 'healthyReturn.healthyForSeconds must be 0 to 3600' })
      .max(3600, { error: 'healthyReturn.healthyForSeconds must be 0 to 3600' })
      .optional()
      .describe(
        'How long the node must have been Ready since it came back (default 60)',
      ),
    timeoutSeconds: z
      .number({ error: 'healthyReturn.timeoutSeconds must be a number' })
      .int({ error: 'healthyReturn.timeoutSeconds must be a whole number' })
      .min(60, { error: 'healthyReturn.timeoutSeconds must be 60 to 86400' })
      .max(86400, { error: 'healthyReturn.timeoutSeconds must be 60 to 86400' })
      .optional()
      .describe(
        'Not healthy this long after it came back: Failed, naming the alerts (default 900)',
      ),
  },
  {
    error: issue =>
      issue.code === 'unrecognized_keys'
        ? `healthyReturn takes only healthyForSeconds and timeoutSeconds`
        : 'healthyReturn must be an object',
  },
);

/** A healthy return in a request body. */
export type HealthyReturnBody = z.input<typeof healthyReturnBodySchema>;

/** The body of `POST /clusters/:cluster/servers/:node/actions/:action`. */
export const actionRequestBodySchema = z.object({
  reason: reasonField.describe(
    'Why, in the requester’s words; the deployment reason policy applies (by default 10 to 500 characters)',
  ),
  preflightToken: z
    .string({ error: 'preflightToken must be a string' })
    .max(4096)
    .optional()
    .describe(
      'The token of the pre-flight the caller reviewed (preflight-server-action); drain, reboot and shutdown need it',
    ),
  typedName: z
    .string({ error: 'typedName must be a string' })
    .max(253)
    .optional()
    .describe(
      'The node name typed out as confirmation: reboot and shutdown need it, and so does any action that spends the last quorum margin',
    ),
  deleteEmptyDirData: z
    .boolean({ error: 'deleteEmptyDirData must be a boolean' })
    .optional()
    .describe(
      'Evict pods with emptyDir volumes (their data is lost); as in the pre-flight',
    ),
  force: z
    .boolean({ error: 'force must be a boolean' })
    .optional()
    .describe(
      "Evict pods that no controller recreates; as in the pre-flight. For an upgrade: skip Talos's etcd health check, only at the hazard rung (the drain then evicts none of those pods)",
    ),
  allowNodeLocalData: z
    .boolean({ error: 'allowNodeLocalData must be a boolean' })
    .optional()
    .describe(
      'Evict pods whose data is on the node (they cannot run elsewhere until it is back); as in the pre-flight',
    ),
  healthyReturn: healthyReturnBodySchema
    .optional()
    .describe(
      'Opt-in: the maintenance is Complete only after the node has been Ready for healthyForSeconds and none of its alerts fires once the return grace has passed; past timeoutSeconds it is Failed, naming the alerts',
    ),
  image: z
    .string({ error: 'image must be a string' })
    .max(MAX_IMAGE_REFERENCE_LENGTH)
    .optional()
    .describe(
      'upgrade only, and required there: the Talos installer image, its tag the version (e.g. factory.talos.dev/installer/<schematic>:v1.12.0); it must start with one of servers.upgrades.talosImages',
    ),
  stage: z
    .boolean({ error: 'stage must be a boolean' })
    .optional()
    .describe(
      'upgrade only: stage the upgrade (Talos keeps the image and installs it early in the next boot)',
    ),
  imageURI: z
    .string({ error: 'imageURI must be a string' })
    .max(MAX_FIRMWARE_URI_LENGTH)
    .optional()
    .describe(
      'firmware only, and required there: the https URL of the firmware image the BMC fetches; its origin must be one of servers.upgrades.firmwareSources',
    ),
  targets: z
    .array(z.string({ error: 'targets must be strings' }).min(1).max(512), {
      error: 'targets must be a list of strings',
    })
    .max(MAX_FIRMWARE_TARGETS)
    .optional()
    .describe(
      'firmware only: the FirmwareInventory members to update (their @odata.id or Id); absent: those the BMC chooses for the image',
    ),
  applyTime: z
    .enum(FIRMWARE_APPLY_TIMES, {
      error: `applyTime must be one of ${FIRMWARE_APPLY_TIMES.join(', ')}`,
    })
    .optional()
    .describe(
      'firmware only: Immediate (default) or OnReset (applied at the reset the operator sends once the task completes)',
    ),
  version: z
    .string({ error: 'version must be a string' })
    .min(1)
    .max(HEALTH_LIMITS.firmwareVersion)
    .optional()
    .describe(
      'firmware only: the version the image installs, as the FirmwareInventory reports it; refused (409) when the targeted components already report it, Done only when they do',
    ),
  checksum: z
    .string({ error: 'checksum must be a string' })
    .regex(FIRMWARE_CHECKSUM, {
      error: 'checksum must be sha256:<64 lowercase hex digits>',
    })
    .optional()
    .describe(
      'firmware only: sha256:<64 lowercase hex> of the image; required for a source of servers.upgrades.firmwareSources with checksumRequired',
    ),
});

/** The fields of an action body that only an upgrade takes. */
export const UPGRADE_BODY_FIELDS = ['image', 'stage'] as const;
/** The fields of an action body that only a firmware update takes. */
export const FIRMWARE_BODY_FIELDS = [
  'imageURI',
  'targets',
  'applyTime',
  'version',
  'checksum',
] as const;

/** The body of an action request (drain options must match the acknowledged pre-flight). */
export type ActionRequestBody = z.input<typeof actionRequestBodySchema>;

/** The names of an action body's fields. */
export type ActionRequestBodyField = keyof typeof actionRequestBodySchema.shape;

// ---- Machines ---------------------------------------------------------------------

/** Shown when an address is not one. */
export const ADDRESS_HINT =
  'must be an IP address or host name, optionally with :port (1-65535)';

/**
 * An address: trimmed, checked as the CRDs check it and read as host[:port] (an IP
 * literal or a DNS name, a port 1-65535). Whether discovery may reach it is the route's
 * check, against the TalosCluster's allowed networks.
 */
const addressField = z
  .string({
    error: missingOr('address is required', 'address must be a string'),
  })
  .trim()
  .refine(
    value =>
      talosAddressSchema.safeParse(value).success &&
      parseDiscoveryEndpoint(value) !== undefined,
    { message: ADDRESS_HINT },
  );

/** The TalosCluster, needed only when a cluster has several. */
const talosClusterField = z
  .string({ error: 'talosCluster must be a string' })
  .min(1, 'talosCluster must not be empty')
  .optional();

/** A talosconfig is a few kilobytes; anything near this is not one. */
export const MAX_TALOSCONFIG_BYTES = 64 * 1024;

/**
 * The body of `POST /clusters/:cluster/discovery/addresses`. `talosCluster` is
 * needed only when the cluster has more than one TalosCluster.
 */
export const addDiscoveryAddressBodySchema = z.object({
  address: addressField,
  reason: reasonField,
  talosCluster: talosClusterField,
});

/** The body of `POST /clusters/:cluster/discovery/addresses`. */
export type AddDiscoveryAddressRequestBody = z.input<
  typeof addDiscoveryAddressBodySchema
>;

/** The body of `POST /clusters/:cluster/machines/:uuid/join`. */
export const joinMachineBodySchema = z.object({ reason: reasonField });

/** The body of `POST /clusters/:cluster/machines/:uuid/join`. */
export type JoinMachineRequestBody = z.input<typeof joinMachineBodySchema>;

/**
 * The body of `POST /clusters/:cluster/reclaims`. `talosconfig` is the foreign
 * cluster's talosconfig (YAML text); it is stored only in a Secret owned by the
 * request, deleted at the reset or at expiry, and never sent back. `ttlMinutes`: how
 * long the request may wait for the typed UUID (1 to 60, default 15).
 */
export const createReclaimBodySchema = z.object({
  address: addressField,
  talosconfig: z
    .string({
      error: missingOr(
        'talosconfig is required',
        'talosconfig must be the text of a talosconfig file',
      ),
    })
    .min(1, 'talosconfig is empty')
    .max(
      MAX_TALOSCONFIG_BYTES,
      `talosconfig is larger than ${MAX_TALOSCONFIG_BYTES / 1024} KiB`,
    ),
  reason: reasonField,
  ttlMinutes: z
    .number({ error: 'ttlMinutes must be a number' })
    .int('ttlMinutes must be a whole number of minutes')
    .min(
      RECLAIM_TTL_MINUTES.min,
      `ttlMinutes must be at least ${RECLAIM_TTL_MINUTES.min}`,
    )
    .max(
      RECLAIM_TTL_MINUTES.max,
      `ttlMinutes must be at most ${RECLAIM_TTL_MINUTES.max}`,
    )
    .optional(),
  talosCluster: talosClusterField,
});

/** The body of `POST /clusters/:cluster/reclaims`. */
export type CreateReclaimRequestBody = z.input<typeof createReclaimBodySchema>;

/** The body of `POST /clusters/:cluster/reclaims/:name/confirm`: the UUID the user typed. */
export const confirmReclaimBodySchema = z.object({
  /** An SMBIOS UUID as a person types it (any case). */
  uuid: z
    .string({ error: missingOr('uuid is required', 'uuid must be a string') })
    .trim()
    .regex(
      /^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}$/,
      'uuid must be a UUID such as 6963c843-f9c9-456d-acfd-4d79eebc1214',
    ),
});

/** The body of `POST /clusters/:cluster/reclaims/:name/confirm`. */
export type ConfirmReclaimRequestBody = z.input<
  typeof confirmReclaimBodySchema
>;

// ---- Maintenance plans ------------------------------------------------------------

/** The most nodes one plan takes (as the CRD's spec.nodes). */
export const MAX_PLAN_NODES = 500;

/** A reason whose only message of its own is for a missing one. */
const planReasonField = z.string({
  error: issue =>
    issue.input === undefined ? 'reason is required' : undefined,
});

/**
 * A plan's Talos upgrade as Backstage takes it: the MaintenancePlan's `spec.upgrade`
 * without `force` (Talos's etcd check is skipped only for one node, at the hazard rung,
 * never for a pool).
 */
export const planUpgradeBodySchema = z.strictObject(
  {
    image: upgradeRequestSchema.shape.image,
    stage: upgradeRequestSchema.shape.stage,
  },
  {
    error: issue =>
      issue.code === 'unrecognized_keys'
        ? 'upgrade takes only image and stage (no force through Backstage)'
        : 'upgrade must be an object',
  },
);

/** A plan's firmware update: the MaintenancePlan's `spec.firmware`, field for field. */
export const planFirmwareBodySchema = z.strictObject(
  firmwareRequestSchema.shape,
  {
    error: issue =>
      issue.code === 'unrecognized_keys'
        ? `firmware takes only ${Object.keys(firmwareRequestSchema.shape).join(
            ', ',
          )}`
        : 'firmware must be an object',
  },
);

/** A plan's Talos upgrade in a request body. */
export type PlanUpgradeBody = z.input<typeof planUpgradeBodySchema>;
/** A plan's firmware update in a request body. */
export type PlanFirmwareBody = z.input<typeof planFirmwareBodySchema>;

/** The body each installing intent carries, and no other intent may. */
const PLAN_INSTALL_BODIES = {
  upgrade: 'upgrade',
  firmware: 'firmware',
} as const;

/**
 * What `POST /clusters/:cluster/plans` accepts (its typed form is
 * {@link PlanRequestBody}); the spec's parts (selector, gates, window, ...) are
 * checked by the MaintenancePlan schema once the backend has built the spec. Intent
 * `upgrade` needs `upgrade`, intent `firmware` needs `firmware`, and neither body goes
 * with another intent.
 */
export const planRequestBodySchema = z
  .strictObject({
    intent: z.enum(PLAN_REQUEST_INTENTS, {
      error: `must be one of ${PLAN_REQUEST_INTENTS.join(', ')}`,
    }),
    upgrade: planUpgradeBodySchema
      .optional()
      .describe(
        'intent upgrade only, and required there: the Talos installer image (its tag the version) and stage; the image must start with one of servers.upgrades.talosImages',
      ),
    firmware: planFirmwareBodySchema
      .optional()
      .describe(
        "intent firmware only, and required there: the firmware image's https URI (its origin one of servers.upgrades.firmwareSources), targets and applyTime",
      ),
    nodes: z
      .array(z.string().min(1).max(253))
      .min(1)
      .max(MAX_PLAN_NODES)
      .optional(),
    selector: labelSelectorSchema.optional(),
    maxParallel: z.unknown().optional(),
    gates: z.unknown().optional(),
    healthyReturn: healthyReturnBodySchema.optional(),
    window: z.unknown().optional(),
    failurePolicy: z.unknown().optional(),
    drain: z
      .strictObject({
        deleteEmptyDirData: z.boolean().optional(),
        force: z.boolean().optional(),
        allowNodeLocalData: z.boolean().optional(),
      })
      .optional(),
    reason: planReasonField,
    preflightToken: z.string().max(4096).optional(),
    typedCount: z.number().int().optional(),
    typedNames: z
      .array(z.string().max(253))
      .max(MAX_PLAN_NODES)
      .optional()
      .describe(
        'The names of the nodes whose step consumes the last quorum margin (the hazard rung of the plan pre-flight), each typed out',
      ),
  })
  .superRefine((body, ctx) => {
    for (const [intent, field] of Object.entries(PLAN_INSTALL_BODIES)) {
      const given = body[field] !== undefined;
      if (body.intent === intent && !given) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field} is required with intent ${intent}`,
        });
      } else if (body.intent !== intent && given) {
        ctx.addIssue({
          code: 'custom',
          path: [field],
          message: `${field} goes only with intent ${intent}, not ${body.intent}`,
        });
      }
    }
  });

/** The body of `POST .../plans/:name/{pause,resume,cancel}`. */
export const planControlBodySchema = z.object({ reason: planReasonField });

/** The body of `POST .../plans/:name/renew`. */
export const planRenewBodySchema = z.strictObject({
  reason: planReasonField,
  skipRefused: z
    .boolean({ error: 'skipRefused must be a boolean' })
    .optional()
    .describe(
      'Renew without the nodes the caller may not act on: their steps are skipped',
    ),
  preflightToken: z
    .string({ error: 'preflightToken must be a string' })
    .max(4096)
    .optional()
    .describe(
      "The token of the renewer's plan pre-flight of the remaining steps (intent, maxParallel and drain options of the plan): needed when a remaining step is at the hazard rung or above the rung it was acknowledged at; with it the renewer's acknowledgement replaces the creator's",
    ),
  typedNames: z
    .array(z.string().max(253), { error: 'typedNames must be a list of names' })
    .max(MAX_PLAN_NODES)
    .optional()
    .describe(
      'The names of the remaining nodes at the hazard rung of that pre-flight, each typed out',
    ),
});
