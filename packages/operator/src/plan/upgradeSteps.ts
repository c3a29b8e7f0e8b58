/*
 * The parts of a plan that differ for intents upgrade and firmware (docs/plans.md,
 * "Rolling upgrades"): what a step's NodeMaintenance carries of the plan's body, which
 * NodeMaintenance is the plan's step, the nodes left out up front because they already
 * run the target, each node's version before and after, and the summary "12 of 40 at
 * v1.12.0" (servers-common's planUpgradeSummary, which the portal renders too).
 *
 * Everything else about those steps is the maintenance's: the drain, the guard and the
 * ceremony, the image allowed by the operator's own list, send-once, the deadline and the
 * rollback (maintenance/upgradeRows.ts). A plan never sends anything itself.
 */
import {
  alreadyAtTarget,
  firmwareAlreadyAt,
  firmwareAlreadyAtTarget,
  planFirmwareTarget,
  planUpgradeSummary,
  planUpgradeTarget,
  talosVersionOfOsImage,
  type MaintenancePlan,
  type MaintenancePlanStatus,
  type NodeMaintenance,
  type PlanNode,
} from '@rackside/plugin-servers-common';
import type { NodeView } from '../runtime/nodeView';

/** The body a step's NodeMaintenance carries: the plan's spec.upgrade or spec.firmware. */
export function stepBody(
  plan: MaintenancePlan,
): Pick<NodeMaintenance['spec'], 'upgrade' | 'firmware'> {
  return {
    ...(plan.spec.upgrade ? { upgrade: plan.spec.upgrade } : {}),
    ...(plan.spec.firmware ? { firmware: plan.spec.firmware } : {}),
  };
}

/** A JSON text that does not depend on key order (undefined fields left out). */
function keyed(value: unknown): string {
  return JSON.stringify(value ?? null, (_key, v) =>
    v && typeof v === 'object' && !Array.isArray(v)
      ? Object.fromEntries(
          Object.entries(v as Record<string, unknown>).sort(([a], [b]) =>
            a < b ? -1 : 1,
          ),
        )
      : v,
  );
}

/**
 * Why a NodeMaintenance owned by the plan does not carry the plan's body: anyone who may
 * create NodeMaintenances could write a step with another image (or force) under the
 * plan's name. Undefined when it carries exactly the plan's.
 */
export function bodyMismatch(
  plan: MaintenancePlan,
  nm: NodeMaintenance,
): string | undefined {
  const wrong: string[] = [];
  if (keyed(nm.spec.upgrade) !== keyed(plan.spec.upgrade)) {
    wrong.push(
      nm.spec.upgrade
        ? `asks the upgrade ${keyed(nm.spec.upgrade)}, not the plan's`
        : "lacks the plan's upgrade",
    );
  }
  if (keyed(nm.spec.firmware) !== keyed(plan.spec.firmware)) {
    wrong.push(
      nm.spec.firmware
        ? `asks the firmware update ${keyed(nm.spec.firmware)}, not the plan's`
        : "lacks the plan's firmware update",
    );
  }
  return wrong.length > 0 ? wrong.join(', ') : undefined;
}

/**
 * A node of an upgrade plan as the plan resolves it: Skipped up front when its Node
 * already names the target (`already at v1.12.0`), else Pending with the version it runs
 * now. Undefined for a plan of another intent (the step is as before).
 */
export function resolvedUpgradeStep(
  plan: MaintenancePlan,
  step: PlanNode,
  node: NodeView | undefined,
  at: string,
  /** The node's BMC firmware as its last health reading listed it (a firmware plan). */
  firmwareReading?: ReadonlyArray<{
    id?: string;
    name: string;
    version: string;
  }>,
): PlanNode | undefined {
  const firmwareTarget = planFirmwareTarget(plan.spec);
  if (firmwareTarget !== undefined) {
    // A firmware plan with a version: its BMC already reports it for the targets.
    const skip = firmwareAlreadyAtTarget(plan.spec, firmwareReading);
    return skip
      ? {
          ...step,
          phase: 'Skipped',
          endedAt: at,
          message: skip,
          firmwareVersion: { before: firmwareTarget, after: firmwareTarget },
        }
      : undefined;
  }
  const target = planUpgradeTarget(plan.spec);
  if (target === undefined) return undefined;
  const osImage = node?.status?.nodeInfo?.osImage;
  const skip = alreadyAtTarget(target, osImage);
  if (skip) {
    return {
      ...step,
      phase: 'Skipped',
      endedAt: at,
      message: skip,
      talosVersion: { before: target, after: target },
    };
  }
  const running = talosVersionOfOsImage(osImage);
  return running ? { ...step, talosVersion: { before: running } } : step;
}

/**
 * A step of an upgrade plan with the versions its maintenance recorded: `before` is the
 * version the node ran when the upgrade was recorded, `after` the one it came back on.
 */
export function withStepVersions(
  plan: MaintenancePlan,
  step: PlanNode,
  nm: NodeMaintenance,
): PlanNode {
  if (plan.spec.intent === 'firmware')
    return withFirmwareVersions(plan, step, nm);
  if (plan.spec.intent !== 'upgrade') return step;
  const recorded = nm.status?.upgrade;
  const before = recorded?.fromVersion ?? step.talosVersion?.before;
  const after = recorded?.cameBackOn ?? step.talosVersion?.after;
  if (before === undefined && after === undefined) return step;
  return {
    ...step,
    talosVersion: {
      ...(before !== undefined ? { before } : {}),
      ...(after !== undefined ? { after } : {}),
    },
  };
}

/**
 * A step of a firmware plan with a version: `before` the version its targeted components
 * reported when the update was recorded (when they agree), `after` the plan's version
 * once the inventory read after the update reports it for them.
 */
function withFirmwareVersions(
  plan: MaintenancePlan,
  step: PlanNode,
  nm: NodeMaintenance,
): PlanNode {
  const target = planFirmwareTarget(plan.spec);
  const recorded = nm.status?.firmware;
  if (target === undefined || !recorded) return step;
  const targets = plan.spec.firmware?.targets;
  const targeted = recorded.before.filter(
    c =>
      !targets?.length ||
      targets.some(
        t => c.id === t || c.id.replace(/\/+$/, '').split('/').pop() === t,
      ),
  );
  const versions = [...new Set(targeted.map(c => c.version))];
  const before = versions.length === 1 ? versions[0] : undefined;
  const after = firmwareAlreadyAt(target, recorded.after, targets)
    ? target
    : undefined;
  if (before === undefined && after === undefined) return step;
  return {
    ...step,
    firmwareVersion: {
      ...step.firmwareVersion,
      ...(before !== undefined ? { before } : {}),
      ...(after !== undefined ? { after } : {}),
    },
  };
}

/**
 * A step whose upgrade was Refused with nothing sent because its node already runs the
 * target (someone upgraded it after the plan resolved its nodes): Skipped, as it would
 * have been up front, not a refusal that counts against the failure policy. Undefined
 * for any other refusal.
 */
export function skippedAtTarget(
  plan: MaintenancePlan,
  step: PlanNode,
  nm: NodeMaintenance,
  node: NodeView | undefined,
): PlanNode | undefined {
  if (nm.status?.phase !== 'Refused' || nm.status?.power?.upgrade) {
    return undefined;
  }
  const firmwareTarget = planFirmwareTarget(plan.spec);
  if (firmwareTarget !== undefined) {
    // Its maintenance found the BMC already at the version (firmwareRows.ts's refusal),
    // from the health reading or the inventory read right before sending.
    const skip = `already at ${firmwareTarget}`;
    const said = nm.status?.refusal?.reason ?? '';
    if (nm.status?.power?.firmware || !said.includes(`: ${skip} (`)) {
      return undefined;
    }
    return {
      ...step,
      phase: 'Skipped',
      message: skip,
      firmwareVersion: { ...step.firmwareVersion, after: firmwareTarget },
    };
  }
  const target = planUpgradeTarget(plan.spec);
  const skip = alreadyAtTarget(target, node?.status?.nodeInfo?.osImage);
  if (!skip || target === undefined) return undefined;
  return {
    ...step,
    phase: 'Skipped',
    message: skip,
    talosVersion: { ...step.talosVersion, after: target },
  };
}

/** What a Done step did, in a few words. */
export function doneText(plan: MaintenancePlan, step: PlanNode): string {
  switch (plan.spec.intent) {
    case 'reboot':
      return 'rebooted and returned';
    case 'upgrade': {
      const v = step.talosVersion;
      return `upgraded${v?.before ? ` from ${v.before}` : ''}${
        v?.after ? ` to ${v.after}` : ''
      } and returned`;
    }
    case 'firmware':
      return 'firmware updated and returned';
    default:
      return 'drained, then returned to service';
  }
}

/** The verb of a finished plan's sentence: "5 of 6 upgraded". */
export function doneVerb(plan: MaintenancePlan): string {
  switch (plan.spec.intent) {
    case 'reboot':
      return 'rebooted';
    case 'upgrade':
      return 'upgraded';
    case 'firmware':
      return 'updated';
    default:
      return 'drained';
  }
}

/** The status with `upgrade` (the summary) for an upgrade plan; unchanged otherwise. */
export function withUpgradeSummary(
  plan: MaintenancePlan,
  status: MaintenancePlanStatus,
): MaintenancePlanStatus {
  const summary = planUpgradeSummary(plan.spec, status.nodes ?? []);
  if (!summary) return status;
  return {
    ...status,
    upgrade: {
      target: summary.target,
      atTarget: summary.atTarget,
      total: summary.total,
      summary: summary.text,
    },
  };
}
