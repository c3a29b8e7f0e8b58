/**
 * What the BMC's health reading asks of a request (docs/hardware-health.md, docs/architecture.md):
 * returning a server to service while its BMC reports the hardware Critical needs the
 * typed node name, one rung up, and says why. The backend applies it when it answers
 * (the detail's and the list's ceremonies, the action request's check); the frontend
 * renders what it says; nothing else decides it.
 */
import type { CeremonyRaise } from './types';
import type { ServerAction } from '../permissions';

/** The actions that put a server back into service (uncordon, or power on a shut-down one). */
export const RETURN_TO_SERVICE_ACTIONS: readonly ServerAction[] = [
  'uncordon',
  'power-on',
];

/** What the rule reads of a ServerBMC's `status.health`. */
export interface HardwareHealthFacts {
  rollup: 'OK' | 'Warning' | 'Critical' | 'Unknown';
  /** The parts that are not OK, as the operator recorded them. */
  parts?: readonly { name: string; health: 'OK' | 'Warning' | 'Critical' }[];
}

/** How many parts the reading names as not OK. */
export function failedPartsOf(health: HardwareHealthFacts | undefined): number {
  return health?.parts?.filter(p => p.health !== 'OK').length ?? 0;
}

/**
 * The sentence the pre-flight and the dialog show for a Critical reading: the parts the
 * BMC names Critical (or, when none is, the ones not OK).
 */
export function criticalHardwareReason(health: HardwareHealthFacts): string {
  const parts = health.parts ?? [];
  const critical = parts.filter(p => p.health === 'Critical');
  const named = (critical.length ? critical : parts).map(p => p.name);
  return named.length
    ? `the BMC reports Critical: ${named.join(', ')}`
    : 'the BMC reports Critical';
}

/**
 * The raise a health reading asks of an action: the typed node name for returning a
 * server to service whose rollup is Critical; none otherwise (no reading, OK, Warning,
 * Unknown, or an action that does not return the server).
 */
export function hardwareHealthRaise(
  action: ServerAction,
  health: HardwareHealthFacts | undefined,
): CeremonyRaise | undefined {
  if (!RETURN_TO_SERVICE_ACTIONS.includes(action)) return undefined;
  if (health?.rollup !== 'Critical') return undefined;
  return { level: 'typed-name', why: criticalHardwareReason(health) };
}
