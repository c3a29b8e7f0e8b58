import { z } from 'zod';
import {
  MAINTENANCE_INTENTS,
  MAINTENANCE_PHASES,
  TERMINAL_MAINTENANCE_PHASES,
} from '../rules/quorum';
import {
  conditionsSchema,
  objectNameSchema,
  observedGenerationSchema,
  reasonSchema,
  requestFlagSchema,
  requesterSchema,
  resourceDescriptor,
  timestampSchema,
  type Condition,
} from './common';
import { racksideObjectSchema, type RacksideObject } from './object';
import {
  fixedAtCreation,
  immutable,
  kube,
  setOnce,
  terminalPhaseIsFinal,
  withRules,
} from './kube';
import type { CrdDefinition } from './crd';
import { bmcLogEntriesSchema, HEALTH_ROLLUPS } from './serverBmc';
import { upgradeRequestSchema, upgradeStatusSchema } from './upgrade';
import { firmwareRequestSchema, firmwareStatusSchema } from './firmware';
import {
  approvalFixedAtCreation,
  approvalNotByRequester,
  nodeMaintenanceApprovalSchema,
} from './approval';
import { preflightSchema } from './preflight';

export {
  PREFLIGHT_CEREMONY_LEVELS,
  preflightSchema,
  type PreflightCeremonyLevel,
} from './preflight';

/** Where NodeMaintenance lives in the API. */
export const nodeMaintenanceResource = resourceDescriptor({
  kind: 'NodeMaintenance',
  plural: 'nodemaintenances',
  shortNames: ['nm'],
  namespaced: false,
});

/** The condition types the operator sets on a NodeMaintenance. */
export const NODE_MAINTENANCE_CONDITION_TYPES = [
  'PowerOffConfirmed',
  'AbandonPending',
  'AlertsSilenced',
] as const;
/** A NodeMaintenance condition type. */
export type NodeMaintenanceConditionType =
  (typeof NODE_MAINTENANCE_CONDITION_TYPES)[number];

/** The three request flags a human sets on a running maintenance. */
export const NODE_MAINTENANCE_REQUEST_FLAGS = [
  'returnToService',
  'abandon',
  'powerOn',
] as const;
/** A NodeMaintenance request flag. */
export type NodeMaintenanceRequestFlag =
  (typeof NODE_MAINTENANCE_REQUEST_FLAGS)[number];

/** The power verbs the operator records in `status.power`, at most once each. */
export const RECORDED_POWER_VERBS = [
  'reboot',
  'shutdown',
  'powerOn',
  'upgrade',
  'firmware',
] as const;

const nodeNameSchema = objectNameSchema;

/** A pod as `namespace/name`. */
const podKeySchema = z
  .string()
  .min(3)
  .max(317)
  .regex(/^[a-z0-9][-a-z0-9]*\/[a-z0-9][-a-z0-9.]*$/);

/** Drain options. */
export const drainOptionsSchema = z
  .object({
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'Give up after this long: the maintenance ends Failed with the node left cordoned. Absent: no timeout.',
      ),
    deleteEmptyDirData: z
      .boolean()
      .default(false)
      .describe('Evict pods with emptyDir volumes (their data is lost).'),
    force: z
      .boolean()
      .default(false)
      .describe('Evict pods without a controller (they are not recreated).'),
    allowNodeLocalData: z
      .boolean()
      .default(false)
      .describe(
        'Evict pods whose data is on this node (a PVC bound to a local PersistentVolume or one whose node affinity names the node, or a hostPath volume). They cannot run elsewhere until the node is back.',
      ),
    gracePeriodSeconds: z
      .number()
      .int()
      .min(0)
      .optional()
      .describe(
        "Grace period given to each evicted pod. Absent: the pod's own.",
      ),
  })
  .describe('How the drain evicts.');

/** Defaults of a healthy return (docs/alerts.md, "A return that proves health"). */
export const HEALTHY_RETURN_DEFAULTS = {
  healthyForSeconds: 60,
  timeoutSeconds: 900,
} as const;

/**
 * A return that proves health: the node Ready for healthyForSeconds and, with an
 * Alertmanager configured, none of its alerts firing once the return grace has passed.
 */
export const healthyReturnSchema = z
  .object({
    healthyForSeconds: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .default(HEALTHY_RETURN_DEFAULTS.healthyForSeconds)
      .describe(
        'How long the node must have been Ready since it came back (default 60).',
      ),
    timeoutSeconds: z
      .number()
      .int()
      .min(60)
      .max(86400)
      .default(HEALTHY_RETURN_DEFAULTS.timeoutSeconds)
      .describe(
        'Not healthy this long after it came back: Failed, naming the firing alerts (default 900).',
      ),
  })
  .describe(
    "Done only after the node has been Ready for healthyForSeconds and, with Alertmanager configured, no alert of the node fires once the return grace has passed (Rackside's own silence does not hide them).",
  );

/** A healthy-return check (defaults applied). */
export type HealthyReturn = z.infer<typeof healthyReturnSchema>;

const specShape = {
  nodeName: kube(nodeNameSchema, {
    validations: [immutable('nodeName')],
  }).describe('The Node this maintenance acts on.'),
  intent: kube(z.enum(MAINTENANCE_INTENTS), {
    validations: [immutable('intent')],
  }).describe(
    'How far the maintenance goes: cordon parks in Cordoned, drain in Drained, reboot returns once the node is back, shutdown parks in PoweredOff until powerOn, upgrade returns once the node is back on the version of spec.upgrade.image, firmware returns once the FirmwareInventory of the BMC reports a new version for the components of spec.firmware.',
  ),
  reason: kube(reasonSchema, { validations: [immutable('reason')] }),
  requestedBy: requesterSchema
    .optional()
    .describe(
      'Who asked: a Backstage entity ref, or the Kubernetes user for objects made with kubectl.',
    ),
  preflight: preflightSchema.optional(),
  approval: nodeMaintenanceApprovalSchema
    .optional()
    .describe(
      'Held for a second person (docs/approvals.md), written only by the Rackside backend: with required, the operator touches nothing until approvedBy is set, and refuses the maintenance once rejected or expired.',
    ),
  drain: drainOptionsSchema.optional(),
  healthyReturn: healthyReturnSchema
    .optional()
    .describe(
      'Opt-in: Complete only after the node has been Ready for healthyForSeconds and, with Alertmanager configured, none of its alerts fires once the return grace has passed; past timeoutSeconds the maintenance is Failed, naming the alerts. Absent: Complete as soon as the node is schedulable and Ready.',
    ),
  upgrade: upgradeRequestSchema.optional(),
  firmware: firmwareRequestSchema.optional(),
  returnToService: requestFlagSchema
    .optional()
    .describe('Set to end the maintenance: uncordon and wait for Ready.'),
  abandon: requestFlagSchema
    .optional()
    .describe(
      'Set to give up: restore the schedulability from before, never send a power verb, end Complete (abandoned).',
    ),
  powerOn: requestFlagSchema
    .optional()
    .describe(
      'Set on a PoweredOff shutdown to power the machine on (sent once), then return to service.',
    ),
};

/** `spec` of a NodeMaintenance. Fixed at creation, except the request flags (set once). */
export const nodeMaintenanceSpecSchema = withRules(z.object(specShape), [
  fixedAtCreation('requestedBy'),
  fixedAtCreation('preflight'),
  fixedAtCreation('drain'),
  fixedAtCreation('healthyReturn'),
  fixedAtCreation('upgrade'),
  fixedAtCreation('firmware'),
  approvalFixedAtCreation,
  approvalNotByRequester,
  ...NODE_MAINTENANCE_REQUEST_FLAGS.map(flag => setOnce(flag)),
  {
    rule: "!has(self.powerOn) || self.intent == 'shutdown'",
    message: 'powerOn applies only to a maintenance with intent shutdown',
    fieldPath: '.powerOn',
    check: spec => !spec.powerOn || spec.intent === 'shutdown',
  },
  {
    rule: "has(self.upgrade) == (self.intent == 'upgrade')",
    message:
      'upgrade is required with intent upgrade, and applies to no other intent',
    fieldPath: '.upgrade',
    check: spec => (spec.upgrade !== undefined) === (spec.intent === 'upgrade'),
  },
  {
    rule: "has(self.firmware) == (self.intent == 'firmware')",
    message:
      'firmware is required with intent firmware, and applies to no other intent',
    fieldPath: '.firmware',
    check: spec =>
      (spec.firmware !== undefined) === (spec.intent === 'firmware'),
  },
]).describe('What was asked, by whom and why.');

const powerVerbRecordSchema = z
  .object({
    recordedAt: timestampSchema.describe(
      'When the operator recorded that it is about to send the verb (before the call).',
    ),
    sentAt: timestampSchema
      .optional()
      .describe('When the channel accepted the verb.'),
    channel: z.enum(['talos', 'redfish']).optional(),
    detail: z
      .string()
      .max(1024)
      .optional()
      .describe(
        'What the channel was asked exactly (e.g. the Redfish ResetType) or answered (e.g. a Talos actor id).',
      ),
    error: z
      .string()
      .max(4096)
      .optional()
      .describe('Why the call failed, if it did.'),
    nodeBefore: z
      .object({
        ready: z
          .boolean()
          .describe('Whether the Node was Ready when the verb was recorded.'),
        bootID: z
          .string()
          .max(256)
          .optional()
          .describe("The Node's boot ID when the verb was recorded."),
      })
      .optional()
      .describe(
        'The Node when the verb was recorded: a verb left without an answer is settled only by a change from this.',
      ),
  })
  .describe(
    'One power verb: recorded before it is sent, so a restart never sends it again.',
  );

/** `status.power` at-most-once rules: a recorded verb stays; its sentAt is set once. */
function powerRecordRules() {
  return RECORDED_POWER_VERBS.map(verb => {
    const old = `oldSelf.power.${verb}`;
    const now = `self.power.${verb}`;
    return {
      rule:
        `!has(oldSelf.power) || !has(${old}) || (has(self.power) && has(${now}) && ${now}.recordedAt == ${old}.recordedAt` +
        ` && (!has(${old}.sentAt) || (has(${now}.sentAt) && ${now}.sentAt == ${old}.sentAt)))`,
      message: `status.power.${verb} is sent at most once: once recorded it cannot be removed or re-recorded, and its sentAt cannot change`,
      fieldPath: `.power`,
    };
  });
}

const drainProgressSchema = z
  .object({
    startedAt: timestampSchema.optional(),
    total: z
      .number()
      .int()
      .min(0)
      .default(0)
      .describe('Pods the drain has to evict.'),
    evicted: z.number().int().min(0).default(0).describe('Pods gone so far.'),
    pending: z.number().int().min(0).default(0).describe('Pods still there.'),
    pendingPods: z
      .array(podKeySchema)
      .max(2000)
      .optional()
      .describe('The pods still there, as namespace/name.'),
    blockedBy: z
      .array(
        z.object({
          pod: podKeySchema.describe('The pod, as namespace/name.'),
          pdb: objectNameSchema.describe(
            "The PodDisruptionBudget (in the pod's namespace) that refused the eviction.",
          ),
          message: z
            .string()
            .max(4096)
            .describe("The apiserver's message for the 429."),
        }),
      )
      .max(2000)
      .optional()
      .describe('Evictions a PodDisruptionBudget is refusing right now.'),
    order: z
      .number()
      .int()
      .optional()
      .describe(
        'The rackside.dev/drain-order group being evicted now; the next group starts once its pods are gone.',
      ),
    waitingFor: z
      .array(podKeySchema)
      .max(2000)
      .optional()
      .describe(
        'Pods with rackside.dev/drain: wait-completed the drain waits for (never evicted), as namespace/name.',
      ),
    virtualMachines: z
      .array(
        z.object({
          vmi: podKeySchema.describe(
            'The KubeVirt VirtualMachineInstance, as namespace/name.',
          ),
          action: z
            .enum(['migrate', 'shutdown', 'blocks'])
            .describe(
              'What evicting its pod does: live migration, shutdown, or nothing (KubeVirt refuses the eviction).',
            ),
        }),
      )
      .max(2000)
      .optional()
      .describe(
        'The VirtualMachineInstances on the node when the drain read its storage (absent where the cluster has no such API), by their eviction strategy.',
      ),
    lastError: z.string().max(4096).optional(),
  })
  .describe('Drain progress.');

/** The Alertmanager silences a maintenance holds on its node's alerts (docs/alerts.md). */
export const nodeMaintenanceAlertingSchema = z
  .object({
    silenceIds: z
      .array(z.string().min(1).max(128))
      .max(16)
      .describe(
        "The Alertmanager silences Rackside holds for this maintenance, one per alert matcher template (the templates are alternatives and Alertmanager ANDs a silence's matchers).",
      ),
    until: timestampSchema
      .optional()
      .describe('When the silences end unless renewed (their endsAt).'),
    renewedAt: timestampSchema
      .optional()
      .describe('When the silences were last created or renewed.'),
    failedAt: timestampSchema
      .optional()
      .describe(
        'When Alertmanager last could not be reached; the next try is one --silence-renew later. Absent after a success.',
      ),
    expiredAt: timestampSchema
      .optional()
      .describe(
        'When Rackside expired them (the maintenance ended); absent while they are held.',
      ),
  })
  .describe(
    "The silence Rackside holds on the node's alerts while the maintenance is open, as a lease (renewed, capped by the operator's --silence-max). Absent when no Alertmanager is configured.",
  );

const hardwareReadingSchema = z.object({
  rollup: z.enum(HEALTH_ROLLUPS),
  readAt: timestampSchema,
});

const statusShape = {
  phase: z.enum(MAINTENANCE_PHASES).optional(),
  message: z
    .string()
    .max(4096)
    .optional()
    .describe('Human-readable summary of the current phase.'),
  conditions: conditionsSchema.optional(),
  drain: drainProgressSchema.optional(),
  wasUnschedulable: z
    .boolean()
    .optional()
    .describe(
      "The node's spec.unschedulable before this maintenance cordoned it; abandon restores it.",
    ),
  bootIdBefore: z
    .string()
    .max(256)
    .optional()
    .describe(
      'The boot ID before the reboot or shutdown; a new one means the node is back.',
    ),
  nodeSeenNotReadyAt: timestampSchema
    .optional()
    .describe(
      'When the operator first saw the Node NotReady after the shutdown was accepted: Ready again after a power-on then means the machine is back.',
    ),
  cordonedAt: timestampSchema.optional(),
  rebootSentAt: timestampSchema.optional(),
  poweredOffAt: timestampSchema
    .optional()
    .describe(
      'When the channel accepted the shutdown; bounds the PowerOffConfirmed readback window.',
    ),
  powerOnSentAt: timestampSchema.optional(),
  returnedAt: timestampSchema.optional(),
  completedAt: timestampSchema.optional(),
  power: z
    .object({
      reboot: powerVerbRecordSchema.optional(),
      shutdown: powerVerbRecordSchema.optional(),
      powerOn: powerVerbRecordSchema.optional(),
      upgrade: powerVerbRecordSchema.optional(),
      firmware: powerVerbRecordSchema.optional(),
    })
    .optional()
    .describe('The power verbs of this maintenance, each sent at most once.'),
  refusal: z
    .object({
      reason: z.string().min(1).max(4096),
      members: z.number().int().min(0).optional(),
      quorum: z.number().int().min(0).optional(),
      ready: z.number().int().min(0).optional(),
      margin: z.number().int().optional(),
      blockingMaintenance: objectNameSchema
        .optional()
        .describe(
          'The non-terminal NodeMaintenance of the same node that this one collided with.',
        ),
    })
    .optional()
    .describe(
      'Why the operator refused, with the quorum numbers where they apply.',
    ),
  admission: z
    .object({
      verdict: z
        .enum(['allow', 'hazard'])
        .describe('The guard verdict the request was admitted at.'),
      at: timestampSchema.describe('When it was admitted.'),
      members: z.number().int().min(0).optional(),
      quorum: z.number().int().min(0).optional(),
      ready: z.number().int().min(0).optional(),
      margin: z.number().int().optional(),
    })
    .optional()
    .describe(
      'The guard verdict and quorum numbers at admission: the check right before a power verb is sent compares against them.',
    ),
  upgrade: upgradeStatusSchema.optional(),
  firmware: firmwareStatusSchema.optional(),
  alerting: nodeMaintenanceAlertingSchema.optional(),
  abandoned: z
    .boolean()
    .optional()
    .describe('The maintenance was abandoned (it ends Complete).'),
  history: z
    .array(
      z.object({
        phase: z.enum(MAINTENANCE_PHASES),
        at: timestampSchema,
        message: z.string().max(1024).optional(),
      }),
    )
    .max(50)
    .optional()
    .describe(
      'Phase transitions, oldest first; the oldest are dropped past 50.',
    ),
  hardware: z
    .object({
      before: hardwareReadingSchema
        .optional()
        .describe('The health read when the maintenance started.'),
      after: hardwareReadingSchema
        .optional()
        .describe('The health read when it ended.'),
      logEntries: bmcLogEntriesSchema.describe(
        "The BMC's log entries created between the two readings, newest first.",
      ),
    })
    .optional()
    .describe(
      'What the BMC said at the start and the end of the maintenance (redfish servers only).',
    ),
  observedGeneration: observedGenerationSchema,
};

/** `status` of a NodeMaintenance, written by the operator only. */
export const nodeMaintenanceStatusSchema = withRules(z.object(statusShape), [
  terminalPhaseIsFinal(TERMINAL_MAINTENANCE_PHASES, 'a maintenance'),
  ...powerRecordRules(),
]).describe('What the operator did.');

/** A NodeMaintenance, as read from the apiserver. */
export const nodeMaintenanceSchema = racksideObjectSchema(
  'NodeMaintenance',
  nodeMaintenanceSpecSchema,
  nodeMaintenanceStatusSchema,
).describe(
  'One maintenance of one node: a request (cordon, drain, reboot, shutdown) the Rackside operator executes, and its lifecycle.',
);

/** A NodeMaintenance (defaults applied, as read back from the apiserver). */
export type NodeMaintenance = RacksideObject<
  'NodeMaintenance',
  NodeMaintenanceSpec,
  NodeMaintenanceStatus
>;
/** A NodeMaintenance as written: fields with defaults may be left out. */
export type NodeMaintenanceInput = z.input<typeof nodeMaintenanceSchema>;
export type NodeMaintenanceSpec = z.infer<typeof nodeMaintenanceSpecSchema>;
export type NodeMaintenanceStatus = z.infer<typeof nodeMaintenanceStatusSchema>;
export type NodeMaintenancePreflight = z.infer<typeof preflightSchema>;
export type NodeMaintenanceDrainOptions = z.infer<typeof drainOptionsSchema>;
export type NodeMaintenanceDrainProgress = z.infer<typeof drainProgressSchema>;
export type PowerVerbRecord = z.infer<typeof powerVerbRecordSchema>;
/** `status.alerting` of a NodeMaintenance. */
export type NodeMaintenanceAlerting = z.infer<
  typeof nodeMaintenanceAlertingSchema
>;
/** `status.hardware` of a NodeMaintenance. */
export type NodeMaintenanceHardware = NonNullable<
  NodeMaintenanceStatus['hardware']
>;
export type NodeMaintenanceCondition = Condition<NodeMaintenanceConditionType>;

export const nodeMaintenanceCrd: CrdDefinition = {
  resource: nodeMaintenanceResource,
  schema: nodeMaintenanceSchema,
  printerColumns: [
    { name: 'Node', type: 'string', jsonPath: '.spec.nodeName' },
    { name: 'Intent', type: 'string', jsonPath: '.spec.intent' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Requester', type: 'string', jsonPath: '.spec.requestedBy' },
    {
      name: 'Age',
      type: 'date',
      jsonPath: '.metadata.creationTimestamp',
    },
    {
      name: 'Evicted',
      type: 'integer',
      jsonPath: '.status.drain.evicted',
      priority: 1,
    },
    {
      name: 'Pending',
      type: 'integer',
      jsonPath: '.status.drain.pending',
      priority: 1,
    },
    { name: 'Reason', type: 'string', jsonPath: '.spec.reason', priority: 1 },
  ],
};
