/*
 * A rolling Talos upgrade through a MaintenancePlan (docs/plans.md, "Rolling upgrades"):
 * the version the plan installs, which nodes already run it, and how many of the plan's
 * nodes are on it. The operator skips the nodes already there when it resolves the plan
 * and writes the summary into the plan's status; the portal renders the same sentence
 * from the same function. Types only from the resources, so a browser builds no schema.
 */
import {
  firmwareAlreadyAt,
  type FirmwareVersionReading,
} from './firmwareSources';
import { talosVersionOfImage, talosVersionOfOsImage } from './upgradeSources';

/** What the rule reads of a plan's spec. */
export interface PlanUpgradeSpec {
  intent: string;
  upgrade?: { image: string };
  firmware?: { version?: string; targets?: readonly string[] };
}

/** What the rule reads of one step: the versions its node ran before and after. */
export interface PlanUpgradeStep {
  talosVersion?: { before?: string; after?: string };
  /** Intent firmware: the version of the targeted components before and after. */
  firmwareVersion?: { before?: string; after?: string };
}

/**
 * The version an upgrade plan installs: its image's tag. Undefined for any other intent,
 * or an image without a version (every step of it is Refused by its own maintenance).
 */
export function planUpgradeTarget(spec: PlanUpgradeSpec): string | undefined {
  if (spec.intent !== 'upgrade' || !spec.upgrade) return undefined;
  return talosVersionOfImage(spec.upgrade.image);
}

/**
 * Why a node is left out of an upgrade plan before anything is asked of it: it already
 * runs the target (its Node's osImage names it), in the words a single upgrade is
 * refused with (`already at v1.12.0`). Undefined when it is not known to run the target.
 */
export function alreadyAtTarget(
  target: string | undefined,
  osImage: string | undefined,
): string | undefined {
  if (target === undefined) return undefined;
  return talosVersionOfOsImage(osImage) === target
    ? `already at ${target}`
    : undefined;
}

/**
 * The version a firmware plan installs: its spec.firmware.version. Undefined for any
 * other intent, or a firmware plan without one (it skips nothing and counts nothing).
 */
export function planFirmwareTarget(spec: PlanUpgradeSpec): string | undefined {
  if (spec.intent !== 'firmware') return undefined;
  return spec.firmware?.version;
}

/**
 * Why a node is left out of a firmware plan before anything is asked of it: its BMC's
 * last health reading (its ServerBMC's status.health.firmware) already reports the
 * plan's version for the targeted components (`already at 2.5.0`, the words a single
 * update is refused with). Undefined without a version, or when it is not known there.
 */
export function firmwareAlreadyAtTarget(
  spec: PlanUpgradeSpec,
  reading: readonly FirmwareVersionReading[] | undefined,
): string | undefined {
  const target = planFirmwareTarget(spec);
  if (target === undefined) return undefined;
  return firmwareAlreadyAt(target, reading, spec.firmware?.targets);
}

/** How many of an upgrade plan's nodes run its target. */
export interface PlanUpgradeSummary {
  target: string;
  /** Steps whose node is known to run the target: came back on it, or already ran it. */
  atTarget: number;
  total: number;
  /** `12 of 40 at v1.12.0`. */
  text: string;
}

/**
 * "12 of 40 at v1.12.0": of the plan's steps, those whose node came back on the target
 * or already ran it. A node is counted only on what was seen of it (a step's
 * `talosVersion.after`), never because its step is Done: a plan counts versions, not
 * phases. Undefined for a plan that installs no version.
 */
export function planUpgradeSummary(
  spec: PlanUpgradeSpec,
  steps: readonly PlanUpgradeStep[],
): PlanUpgradeSummary | undefined {
  const firmware = planFirmwareTarget(spec);
  const target = planUpgradeTarget(spec) ?? firmware;
  if (target === undefined) return undefined;
  const atTarget = steps.filter(s =>
    firmware !== undefined
      ? s.firmwareVersion?.after === target
      : s.talosVersion?.after === target,
  ).length;
  const total = steps.length;
  return {
    target,
    atTarget,
    total,
    text: `${atTarget} of ${total} at ${target}`,
  };
}
