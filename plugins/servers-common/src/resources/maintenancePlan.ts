import { z } from 'zod';
import {
  conditionsSchema,
  namespaceNameSchema,
  objectNameSchema,
  observedGenerationSchema,
  reasonSchema,
  requestFlagSchema,
  requesterSchema,
  resourceDescriptor,
  timestampSchema,
} from './common';
import { racksideObjectSchema, type RacksideObject } from './object';
import type { CrdDefinition } from './crd';
import {
  approvalNotByRequester,
  approvalSchema,
  planApprovalRules,
} from './approval';
import {
  fixedAtCreation,
  immutable,
  kube,
  setOnce,
  terminalPhaseIsFinal,
  uniqueList,
  withRules,
  type CelRule,
} from './kube';
import {
  drainOptionsSchema,
  healthyReturnSchema,
  PREFLIGHT_CEREMONY_LEVELS,
} from './nodeMaintenance';
import {
  ALERT_GATE_WHEN_UNKNOWN,
  alertGateMatcherError,
  alertnamePatternError,
} from '../rules/alertGate';
import {
  PLAN_PHASES,
  PLAN_STEP_PHASES,
  TERMINAL_PLAN_PHASES,
  TERMINAL_PLAN_STEP_PHASES,
} from '../rules/planPhases';
import { upgradeRequestSchema } from './upgrade';
import { firmwareRequestSchema } from './firmware';

/** Where MaintenancePlan lives in the API. */
export const maintenancePlanResource = resourceDescriptor({
  kind: 'MaintenancePlan',
  plural: 'maintenanceplans',
  shortNames: ['mp'],
  namespaced: false,
});

/** What a plan does to each of its nodes: a NodeMaintenance with this intent. */
export const PLAN_INTENTS = ['drain', 'reboot', 'upgrade', 'firmware'] as const;
/** A plan intent. */
export type PlanIntent = (typeof PLAN_INTENTS)[number];
/**
 * The intents the backend's plan route takes: every plan intent, an upgrade's and a
 * firmware update's with their body (`upgrade`, `firmware`: docs/plans.md, "Rolling
 * upgrades").
 */
export const PLAN_REQUEST_INTENTS = PLAN_INTENTS;

/** The days of a window, as `Intl` writes them in English (`weekday: 'short'`). */
export const WEEKDAYS = [
  'Mon',
  'Tue',
  'Wed',
  'Thu',
  'Fri',
  'Sat',
  'Sun',
] as const;
/** A weekday. */
export type Weekday = (typeof WEEKDAYS)[number];

/** What a plan can wait on (`status.waiting.on`). */
export const PLAN_WAITS = [
  'window',
  'gate',
  'step',
  'pause',
  'authorization',
  'healthyReturn',
] as const;

/** `HH:MM`, 00:00 to 24:00. */
const clockTimeSchema = z
  .string()
  .regex(/^(([01][0-9]|2[0-3]):[0-5][0-9]|24:00)$/)
  .describe('A wall-clock time HH:MM (24:00 is the end of the day).');

/** Whether `Intl` knows this IANA time zone. */
export function isKnownTimeZone(zone: string): boolean {
  try {
    return (
      new Intl.DateTimeFormat('en-US', { timeZone: zone }).resolvedOptions()
        .timeZone !== ''
    );
  } catch {
    return false;
  }
}

/** An IANA time zone name (`Europe/Berlin`, `UTC`). */
const timeZoneSchema = z
  .string()
  .min(1)
  .max(64)
  .regex(/^[A-Za-z][-+_/A-Za-z0-9]*$/)
  .refine(isKnownTimeZone, { message: 'not a known IANA time zone' });

/** A label selector (matchLabels and matchExpressions, as metav1.LabelSelector). */
export const labelSelectorSchema = withRules(
  z.object({
    matchLabels: z.record(z.string(), z.string().max(63)).optional(),
    matchExpressions: z
      .array(
        withRules(
          z.object({
            key: z.string().min(1).max(317),
            operator: z.enum(['In', 'NotIn', 'Exists', 'DoesNotExist']),
            values: z.array(z.string().max(63)).max(64).optional(),
          }),
          [
            {
              rule: "(self.operator in ['In', 'NotIn']) == (has(self.values) && size(self.values) > 0)",
              message:
                'values are required for In and NotIn, and not allowed for Exists and DoesNotExist',
              check: e =>
                ['In', 'NotIn'].includes(e.operator) ===
                (e.values !== undefined && e.values.length > 0),
            },
          ],
        ),
      )
      .max(16)
      .optional(),
  }),
  [
    {
      rule: 'has(self.matchLabels) || has(self.matchExpressions)',
      message:
        'a selector needs matchLabels or matchExpressions (an empty selector would match everything)',
      check: s =>
        Object.keys(s.matchLabels ?? {}).length > 0 ||
        (s.matchExpressions ?? []).length > 0,
    },
  ],
).describe('A label selector, as in a Deployment.');

/** A label selector. */
export type LabelSelector = z.infer<typeof labelSelectorSchema>;

/** One condition on an arbitrary Kubernetes object, checked before each next step. */
export const objectGateSchema = withRules(
  z.object({
    name: objectNameSchema.describe(
      'A name for this gate, shown in status when the plan waits on it.',
    ),
    apiVersion: z
      .string()
      .min(1)
      .max(253)
      .describe('apiVersion of the object (e.g. ceph.rook.io/v1).'),
    kind: z.string().min(1).max(63).describe('kind of the object.'),
    namespace: namespaceNameSchema
      .optional()
      .describe(
        'Its namespace: required for a namespaced kind (a gate never reads a kind cluster-wide); absent for a cluster-scoped kind.',
      ),
    objectName: objectNameSchema
      .optional()
      .describe('The object, by name (or give selector).'),
    selector: labelSelectorSchema
      .optional()
      .describe(
        'Every object the selector matches must pass (or give objectName). None matching does not pass.',
      ),
    condition: z
      .object({
        type: z.string().min(1).max(316),
        status: z.enum(['True', 'False', 'Unknown']).default('True'),
      })
      .optional()
      .describe(
        'Passes when status.conditions has this type with this status.',
      ),
    field: z
      .object({
        path: z
          .string()
          .min(2)
          .max(256)
          .regex(/^(\.[A-Za-z0-9_-]+)+$/)
          .describe('A dotted path into the object, e.g. .status.ceph.health.'),
        value: z
          .string()
          .max(256)
          .describe('Passes when the value at path, as a string, equals this.'),
      })
      .optional()
      .describe(
        "Passes when a field has a value (e.g. a storage cluster's health).",
      ),
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'How long the plan waits for this gate before each step; past it the plan fails. Absent: it waits as long as it takes.',
      ),
  }),
  [
    {
      rule: 'has(self.objectName) != has(self.selector)',
      message: 'an object gate names exactly one of objectName and selector',
      check: g => (g.objectName === undefined) !== (g.selector === undefined),
    },
    {
      rule: 'has(self.condition) != has(self.field)',
      message: 'an object gate checks exactly one of condition and field',
      check: g => (g.condition === undefined) !== (g.field === undefined),
    },
  ],
).describe('A condition on any Kubernetes object, watched by the operator.');

/** An object gate. */
export type ObjectGate = z.infer<typeof objectGateSchema>;

/** At most this many matchers and severities an alert gate names. */
export const MAX_ALERT_GATE_MATCHERS = 8;

/**
 * The alert gate (docs/alerts.md, "The alert gate"): the plan waits while an alert fires
 * that matches every matcher, the alertnames regex and one of the severities.
 */
export const alertGateSchema = z
  .object({
    matchers: z
      .array(
        z
          .string()
          .min(1)
          .max(1024)
          .superRefine((m, ctx) => {
            // The rule's own words: which form is wrong, or why RE2 refuses the regex.
            const error = alertGateMatcherError(m);
            if (error) ctx.addIssue({ code: 'custom', message: error });
          }),
      )
      .max(MAX_ALERT_GATE_MATCHERS)
      .optional()
      .describe(
        'Alertmanager matchers (severity="critical", team=~"db.*"); all must hold. Absent: any alert.',
      ),
    alertnames: z
      .string()
      .min(1)
      .max(256)
      .superRefine((p, ctx) => {
        // Names the pattern and why RE2 refuses it (servers-common's compilePattern).
        const error = alertnamePatternError(p);
        if (error) ctx.addIssue({ code: 'custom', message: error });
      })
      .optional()
      .describe(
        'A regular expression the alertname must match whole (anchored, as Alertmanager matches). Absent: any name.',
      ),
    severities: uniqueList(z.array(z.string().min(1).max(63)).max(8))
      .optional()
      .describe('The severity label is one of these. Absent: any severity.'),
    ignoreSilencedByRackside: z
      .boolean()
      .default(true)
      .describe(
        "An alert silenced only by Rackside's own maintenance silences does not hold the gate (default true); false: it does.",
      ),
    includeSilenced: z
      .boolean()
      .default(false)
      .describe(
        'An alert a person silenced holds the gate too (default false: a silence is a decision to ignore that alert). An inhibited alert that matches always holds it.',
      ),
    whenUnknown: z
      .enum(ALERT_GATE_WHEN_UNKNOWN)
      .default('Hold')
      .describe(
        'When the alert state is unknown (Alertmanager unreachable, stalled, or not configured on the operator): Hold (default) waits as a firing alert would; Proceed is an explicit opt-in to go on without seeing the alerts.',
      ),
  })
  .describe(
    'Wait while a matching alert fires. Alertmanager unreachable or not configured: the gate holds unless whenUnknown is Proceed (the condition AlertsKnown says why).',
  );

/** An alert gate. */
export type AlertGate = z.infer<typeof alertGateSchema>;

/** The gates checked before each next step. */
export const planGatesSchema = z
  .object({
    previousNodeReady: z
      .boolean()
      .default(true)
      .describe('Every node of a finished step is Ready.'),
    podDisruptionBudgetsHealthy: z
      .boolean()
      .default(true)
      .describe(
        'Every PodDisruptionBudget of the cluster is healthy (currentHealthy >= desiredHealthy).',
      ),
    timeoutSeconds: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        'How long the plan waits for previousNodeReady, podDisruptionBudgetsHealthy and alerts before each step; past it the plan fails. Absent: as long as it takes.',
      ),
    objects: uniqueList(z.array(objectGateSchema).max(8), ['name'])
      .optional()
      .describe(
        "Conditions on other objects (at most 8, one watch each): only kinds the chart's operator.planGateReads allows, at most 100 objects a gate; the message says pass or fail and the expected value, never the observed one.",
      ),
    alerts: alertGateSchema.optional(),
  })
  .describe('What must hold before each next step starts.');

/** The gates of a plan. */
export type PlanGates = z.infer<typeof planGatesSchema>;

/** When steps may start. */
export const planWindowSchema = withRules(
  z.object({
    notBefore: timestampSchema
      .optional()
      .describe('No step starts before this instant.'),
    notAfter: timestampSchema
      .optional()
      .describe(
        'No step starts after this instant (running steps finish); past it with steps left, the plan fails.',
      ),
    timeZone: timeZoneSchema
      .default('UTC')
      .describe('The IANA time zone weekdays and hours are read in.'),
    weekdays: uniqueList(z.array(z.enum(WEEKDAYS)).min(1).max(7))
      .optional()
      .describe('Days steps may start on, in timeZone. Absent: every day.'),
    hours: withRules(
      z.object({ start: clockTimeSchema, end: clockTimeSchema }),
      [
        {
          rule: 'self.start != self.end',
          message: 'hours.start and hours.end must differ',
          check: h => h.start !== h.end,
        },
      ],
    )
      .optional()
      .describe(
        'Hours of the day steps may start in, [start, end) in timeZone; end before start spans midnight (22:00 to 04:00). Absent: all day.',
      ),
  }),
  [
    {
      rule: '!has(self.notBefore) || !has(self.notAfter) || timestamp(self.notBefore) < timestamp(self.notAfter)',
      message: 'notBefore must be before notAfter',
      check: w =>
        !w.notBefore ||
        !w.notAfter ||
        Date.parse(w.notBefore) < Date.parse(w.notAfter),
    },
  ],
).describe(
  'When steps may start: outside it no step starts, running ones finish.',
);

/** A plan's window. */
export type PlanWindow = z.infer<typeof planWindowSchema>;

/**
 * The plan's authority as a lease: the Backstage backend checked the requester's
 * permissions at `at` and vouches for them until `until`; no step starts after it until
 * someone renews it (the backend checks their permissions again).
 */
export const planAuthorizationSchema = withRules(
  z.object({
    by: requesterSchema.describe(
      'Whose permissions were checked: the requester, or whoever renewed it last.',
    ),
    at: timestampSchema.describe('When they were checked.'),
    until: timestampSchema.describe('No step starts after this instant.'),
    excluded: uniqueList(z.array(objectNameSchema).max(500))
      .optional()
      .describe(
        'Nodes a renewal left out because the renewer may not act on them: their steps are Skipped.',
      ),
  }),
  [
    {
      rule: 'timestamp(self.at) < timestamp(self.until)',
      message: 'authorization.until must be after authorization.at',
      check: a => Date.parse(a.at) < Date.parse(a.until),
    },
  ],
).describe(
  "The plan's authority (written only by the Backstage backend): no step starts after until.",
);

/** A plan's authorization lease. */
export type PlanAuthorization = z.infer<typeof planAuthorizationSchema>;

/** The most acknowledgements a plan keeps: its creation's and the latest renewals'. */
export const MAX_PLAN_ACKNOWLEDGEMENTS = 50;

/** One acknowledgement of a plan's steps: who vouched for which rung of which step, when. */
export const planAcknowledgementSchema = z
  .object({
    by: requesterSchema.describe(
      'Who acknowledged (the creator or a renewer).',
    ),
    at: timestampSchema.describe('When.'),
    on: z
      .enum(['create', 'renew'])
      .describe('At the creation of the plan, or at a renewal.'),
    preflightTakenAt: timestampSchema.describe(
      'When the plan pre-flight they acknowledged was taken (a renewal needs a later one).',
    ),
    rungs: kube(
      z
        .record(objectNameSchema, z.enum(PREFLIGHT_CEREMONY_LEVELS))
        .refine(r => Object.keys(r).length <= 500, {
          message: 'rungs names at most 500 nodes',
        }),
      { maxProperties: 500 },
    ).describe(
      'The rung each step they acknowledged was at (hazard: its name typed).',
    ),
  })
  .describe('One acknowledgement of the plan pre-flight.');

/** One acknowledgement of a plan's steps. */
export type PlanAcknowledgement = z.infer<typeof planAcknowledgementSchema>;

/**
 * CEL rule: `field` is fixed, except by a renewal (a new `authorization`, which only the
 * Backstage backend writes): the renewer's acknowledgement replaces the creator's.
 */
function changedOnlyByRenewal(field: string): CelRule {
  return {
    rule: `(has(self.${field}) == has(oldSelf.${field}) && (!has(self.${field}) || self.${field} == oldSelf.${field})) || (has(self.authorization) && (!has(oldSelf.authorization) || self.authorization != oldSelf.authorization))`,
    message: `${field} changes only with a renewal (a new authorization): it cannot be added, changed or removed otherwise`,
    fieldPath: `.${field}`,
  };
}

/** A pause or resume: like a request flag, but `at` is required and orders them. */
export const planToggleSchema = requestFlagSchema
  .extend({
    at: timestampSchema.describe(
      'When it was asked; a later pause or resume replaces this one only with a later at.',
    ),
  })
  .describe('Who paused or resumed, why and when.');

/** A pause or resume request. */
export type PlanToggle = z.infer<typeof planToggleSchema>;

/**
 * A toggle (`pause` or `resume`) can be replaced only by one with a later `at`, and is
 * never removed: the latest pause and the latest resume are always on record.
 */
function toggleRule(field: 'pause' | 'resume'): CelRule {
  return {
    rule: `!has(oldSelf.${field}) || (has(self.${field}) && (self.${field} == oldSelf.${field} || timestamp(self.${field}.at) > timestamp(oldSelf.${field}.at)))`,
    message: `${field} cannot be removed, and is replaced only by a ${field} with a later at`,
    fieldPath: `.${field}`,
  };
}

/** A plan is paused when its latest pause is later than its latest resume. */
export function isPlanPaused(spec: {
  pause?: { at: string };
  resume?: { at: string };
}): boolean {
  if (!spec.pause) return false;
  if (!spec.resume) return true;
  return Date.parse(spec.pause.at) > Date.parse(spec.resume.at);
}

const specShape = {
  intent: kube(z.enum(PLAN_INTENTS), {
    validations: [immutable('intent')],
  }).describe(
    'What each step does: a NodeMaintenance with this intent (a drain step is done when its node is Drained; a reboot, upgrade or firmware step when the node is back and returned).',
  ),
  upgrade: upgradeRequestSchema
    .optional()
    .describe(
      "The Talos upgrade of every step (intent upgrade only), copied into each step's spec.upgrade. Nodes whose osImage already names the image's version are Skipped when the plan resolves its nodes.",
    ),
  firmware: firmwareRequestSchema
    .optional()
    .describe(
      "The Redfish firmware update of every step (intent firmware only), copied into each step's spec.firmware.",
    ),
  nodes: uniqueList(z.array(objectNameSchema).min(1).max(500))
    .optional()
    .describe('The nodes, by name (or give selector).'),
  selector: labelSelectorSchema
    .optional()
    .describe(
      'The nodes, by label (or give nodes); resolved once by the operator into status.nodes.',
    ),
  maxParallel: kube(z.number().int().min(1).max(100).default(1), {
    validations: [immutable('maxParallel')],
  }).describe(
    'At most this many steps open at once. Control-plane nodes always go one at a time, after every worker.',
  ),
  gates: planGatesSchema.optional(),
  healthyReturn: healthyReturnSchema
    .optional()
    .describe(
      "A step is Done only after its node has been Ready for healthyForSeconds (default 60) and, with Alertmanager configured, none of its alerts fires once the return grace has passed (Rackside's own silence does not hide them); until then the plan waits on healthyReturn, and past timeoutSeconds (default 900) the step is Failed, naming the alerts. Absent: these defaults.",
    ),
  window: planWindowSchema.optional(),
  failurePolicy: kube(
    z
      .object({
        tolerate: z
          .number()
          .int()
          .min(0)
          .default(0)
          .describe(
            'Failed or refused steps the plan goes on past; one more stops it (default 0: the first stops it).',
          ),
      })
      .prefault({}),
    { validations: [immutable('failurePolicy')] },
  ).describe('What a failed or refused step does to the plan.'),
  drain: drainOptionsSchema.optional().describe('Drain options of every step.'),
  reason: kube(reasonSchema, { validations: [immutable('reason')] }),
  requestedBy: requesterSchema
    .optional()
    .describe(
      'Who asked: a Backstage entity ref, or the Kubernetes user for plans made with kubectl. Every step carries it.',
    ),
  acknowledged: kube(
    z
      .record(objectNameSchema, z.enum(PREFLIGHT_CEREMONY_LEVELS))
      .refine(r => Object.keys(r).length <= 500, {
        message: 'acknowledged names at most 500 nodes',
      }),
    { maxProperties: 500 },
  )
    .optional()
    .describe(
      "The ceremony each node's step was acknowledged at in the plan pre-flight (hazard: its name and a reason typed), written by the Backstage backend and copied to the step's spec.preflight; a renewal that acknowledges the remaining steps afresh replaces theirs. A step whose guard verdict at start or at send is above it is Refused. A node not named here: the intent's own rung (drain: preflight, reboot: typed-name), never hazard.",
    ),
  authorization: planAuthorizationSchema.optional(),
  approval: approvalSchema
    .optional()
    .describe(
      "Held for a second person (docs/approvals.md), written only by the Rackside backend: with required, no step starts until approvedBy is set, and the plan fails once it is rejected or expired. A renewal that raises a step's rung replaces it with a new, undecided one.",
    ),
  acknowledgements: z
    .array(planAcknowledgementSchema)
    .max(MAX_PLAN_ACKNOWLEDGEMENTS)
    .optional()
    .describe(
      "Who acknowledged what, oldest first: the creator's plan pre-flight, then each renewal that acknowledged the remaining steps afresh (written by the Backstage backend; the creation's and the latest ones are kept).",
    ),
  onCancel: kube(z.enum(['finish', 'abandon']).default('finish'), {
    validations: [immutable('onCancel')],
  }).describe(
    'What cancel does to running steps: let them finish (default), or abandon them (the node goes back to service without a power verb).',
  ),
  pause: planToggleSchema
    .optional()
    .describe(
      'Set to pause: no new step starts, running ones finish. The plan is paused while pause.at is later than resume.at.',
    ),
  resume: planToggleSchema
    .optional()
    .describe('Set (with an at later than pause.at) to go on after a pause.'),
  cancel: requestFlagSchema
    .optional()
    .describe(
      'Set (once) to cancel: nothing new starts; running steps finish or are abandoned, as onCancel says.',
    ),
};

/** `spec` of a MaintenancePlan. Fixed at creation, except pause, resume and cancel. */
export const maintenancePlanSpecSchema = withRules(z.object(specShape), [
  {
    rule: 'has(self.nodes) != has(self.selector)',
    message: 'a plan names exactly one of nodes and selector',
    check: spec => (spec.nodes === undefined) !== (spec.selector === undefined),
  },
  fixedAtCreation('nodes'),
  fixedAtCreation('selector'),
  fixedAtCreation('gates'),
  fixedAtCreation('healthyReturn'),
  fixedAtCreation('window'),
  fixedAtCreation('drain'),
  fixedAtCreation('requestedBy'),
  fixedAtCreation('upgrade'),
  fixedAtCreation('firmware'),
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
  changedOnlyByRenewal('acknowledged'),
  changedOnlyByRenewal('acknowledgements'),
  {
    rule: '!has(oldSelf.authorization) || has(self.authorization)',
    message:
      'authorization cannot be removed: a renewal replaces it with a later until',
    fieldPath: '.authorization',
  },
  toggleRule('pause'),
  toggleRule('resume'),
  {
    rule: '!has(self.resume) || (has(oldSelf.resume) && self.resume == oldSelf.resume) || (has(self.pause) && timestamp(self.resume.at) > timestamp(self.pause.at))',
    message: 'a resume needs a pause before it (resume.at later than pause.at)',
    fieldPath: '.resume',
  },
  setOnce('cancel'),
  ...planApprovalRules(),
  approvalNotByRequester,
]).describe('What was asked, by whom and why.');

/** A Talos version, as an osImage or an installer image's tag names it. */
const planTalosVersionSchema = z.string().min(1).max(80);

/** One node of a plan: one step, one NodeMaintenance. */
const planNodeSchema = withRules(
  z.object({
    name: objectNameSchema.describe('The node.'),
    controlPlane: z
      .boolean()
      .default(false)
      .describe(
        'A control-plane member (goes one at a time, after the workers).',
      ),
    phase: z.enum(PLAN_STEP_PHASES),
    maintenance: objectNameSchema
      .optional()
      .describe('The NodeMaintenance of this step (owned by the plan).'),
    startedAt: timestampSchema.optional(),
    endedAt: timestampSchema.optional(),
    message: z
      .string()
      .max(1024)
      .optional()
      .describe('Why it ended so, or what the running step waits on.'),
    talosVersion: z
      .object({
        before: planTalosVersionSchema
          .optional()
          .describe(
            "The version the node ran: its osImage when the plan resolved it, then the step's status.upgrade.fromVersion.",
          ),
        after: planTalosVersionSchema
          .optional()
          .describe(
            'The version the node came back on (status.upgrade.cameBackOn), or the target for a node that already ran it.',
          ),
      })
      .optional()
      .describe(
        'Intent upgrade: the Talos version of this node before and after.',
      ),
    firmwareVersion: z
      .object({
        before: z
          .string()
          .max(128)
          .optional()
          .describe(
            "The version its targeted components reported before (the step's status.firmware.before).",
          ),
        after: z
          .string()
          .max(128)
          .optional()
          .describe(
            "The version they report after: spec.firmware.version once the step's update reached it, or for a node already at it.",
          ),
      })
      .optional()
      .describe(
        'Intent firmware with spec.firmware.version: the firmware version of this node before and after.',
      ),
  }),
  [
    terminalPhaseIsFinal(TERMINAL_PLAN_STEP_PHASES, 'a plan step'),
    setOnce('maintenance'),
  ],
);

/** One step of a plan. */
export type PlanNode = z.infer<typeof planNodeSchema>;

const countsSchema = z
  .object({
    total: z.number().int().min(0),
    pending: z.number().int().min(0),
    running: z.number().int().min(0),
    done: z.number().int().min(0),
    failed: z.number().int().min(0),
    refused: z.number().int().min(0),
    skipped: z.number().int().min(0),
  })
  .describe('Steps per phase.');

/** Steps per phase. */
export type PlanCounts = z.infer<typeof countsSchema>;

const statusShape = {
  phase: z.enum(PLAN_PHASES).optional(),
  message: z
    .string()
    .max(4096)
    .optional()
    .describe('Human-readable summary of the current phase.'),
  resolvedAt: timestampSchema
    .optional()
    .describe('When nodes or selector were resolved into status.nodes (once).'),
  nodes: uniqueList(z.array(planNodeSchema).max(500), ['name'])
    .optional()
    .describe(
      'The nodes of the plan, in the order they go: workers, then control plane, each by name.',
    ),
  counts: countsSchema.optional(),
  upgrade: z
    .object({
      target: z
        .string()
        .min(1)
        .max(128)
        .describe(
          "The version the plan installs (its image's tag; a firmware plan's spec.firmware.version).",
        ),
      atTarget: z
        .number()
        .int()
        .min(0)
        .describe(
          'Nodes known to run the target: came back on it, or already ran it.',
        ),
      total: z.number().int().min(0).describe('Nodes of the plan.'),
      summary: z
        .string()
        .max(256)
        .describe('In words: 12 of 40 at v1.12.0 (planUpgradeSummary).'),
    })
    .optional()
    .describe(
      'Intent upgrade (or firmware with spec.firmware.version): how many of the nodes run the target version, as planUpgradeSummary counts them.',
    ),
  waiting: z
    .object({
      on: z.enum(PLAN_WAITS),
      gate: z
        .string()
        .max(253)
        .optional()
        .describe(
          'The gate: previousNodeReady, podDisruptionBudgetsHealthy, alerts, or the name of an object gate.',
        ),
      message: z.string().max(4096).describe('Why the plan waits.'),
      since: timestampSchema.describe(
        'Since when (a gate timeout counts from here).',
      ),
      until: timestampSchema
        .optional()
        .describe('When the window opens next, or the gate times out.'),
    })
    .optional()
    .describe('What the plan waits on before its next step, and why.'),
  startedAt: timestampSchema
    .optional()
    .describe('When the first step started.'),
  completedAt: timestampSchema.optional(),
  estimate: z
    .object({
      stepSeconds: z
        .number()
        .int()
        .min(0)
        .describe('The mean duration of the finished steps.'),
      remainingSeconds: z
        .number()
        .int()
        .min(0)
        .describe('What is left at that pace and maxParallel.'),
      completesAt: timestampSchema.optional(),
    })
    .optional()
    .describe('When the plan should be done, once a step has finished.'),
  conditions: conditionsSchema.optional(),
  observedGeneration: observedGenerationSchema,
};

/** `status` of a MaintenancePlan, written by the operator only. */
export const maintenancePlanStatusSchema = withRules(z.object(statusShape), [
  terminalPhaseIsFinal(TERMINAL_PLAN_PHASES, 'a plan'),
  {
    rule: '!has(oldSelf.nodes) || (has(self.nodes) && self.nodes.map(n, n.name) == oldSelf.nodes.map(n, n.name))',
    message:
      'status.nodes is resolved once: its nodes and their order never change',
    fieldPath: '.nodes',
  },
  fixedAtCreation('resolvedAt'),
]).describe('What the operator did.');

/** A MaintenancePlan, as read from the apiserver. */
export const maintenancePlanSchema = racksideObjectSchema(
  'MaintenancePlan',
  maintenancePlanSpecSchema,
  maintenancePlanStatusSchema,
).describe(
  'Many servers through one intent (drain, reboot, upgrade or firmware) under one budget: the Rackside operator runs one NodeMaintenance per node, owned by the plan.',
);

/** A MaintenancePlan (defaults applied). */
export type MaintenancePlan = RacksideObject<
  'MaintenancePlan',
  MaintenancePlanSpec,
  MaintenancePlanStatus
>;
/** A MaintenancePlan as written: fields with defaults may be left out. */
export type MaintenancePlanInput = z.input<typeof maintenancePlanSchema>;
export type MaintenancePlanSpec = z.infer<typeof maintenancePlanSpecSchema>;
export type MaintenancePlanStatus = z.infer<typeof maintenancePlanStatusSchema>;

export const maintenancePlanCrd: CrdDefinition = {
  resource: maintenancePlanResource,
  schema: maintenancePlanSchema,
  printerColumns: [
    { name: 'Intent', type: 'string', jsonPath: '.spec.intent' },
    { name: 'Phase', type: 'string', jsonPath: '.status.phase' },
    { name: 'Total', type: 'integer', jsonPath: '.status.counts.total' },
    { name: 'Done', type: 'integer', jsonPath: '.status.counts.done' },
    { name: 'Running', type: 'integer', jsonPath: '.status.counts.running' },
    { name: 'Waiting', type: 'string', jsonPath: '.status.waiting.on' },
    { name: 'Requester', type: 'string', jsonPath: '.spec.requestedBy' },
    { name: 'Age', type: 'date', jsonPath: '.metadata.creationTimestamp' },
    {
      name: 'Failed',
      type: 'integer',
      jsonPath: '.status.counts.failed',
      priority: 1,
    },
    {
      name: 'Refused',
      type: 'integer',
      jsonPath: '.status.counts.refused',
      priority: 1,
    },
    {
      name: 'Max-Parallel',
      type: 'integer',
      jsonPath: '.spec.maxParallel',
      priority: 1,
    },
    {
      name: 'Message',
      type: 'string',
      jsonPath: '.status.message',
      priority: 1,
    },
    { name: 'Reason', type: 'string', jsonPath: '.spec.reason', priority: 1 },
    {
      name: 'Versions',
      type: 'string',
      jsonPath: '.status.upgrade.summary',
      priority: 1,
    },
  ],
};
