/*
 * How the plugin's auditor events are graded and where they came from (docs/architecture.md, "The backend"):
 * reads low, cordon, return to service, drain and abandon medium, the power verbs
 * (reboot, shutdown, power-on), upgrades, firmware updates and maintenance plans high,
 * reclaims critical.
 */
import type { AuditorServiceCreateEventOptions } from '@backstage/backend-plugin-api';
import { POWER_VERBS } from '@rackside/plugin-servers-common';

/** An auditor severity. */
export type AuditSeverity = NonNullable<
  AuditorServiceCreateEventOptions['severityLevel']
>;

/** The severity of a read (lists, one server, maintenances, a pre-flight). */
export const READ_SEVERITY: AuditSeverity = 'low';

/** The severity of a maintenance plan's request, pause, resume or cancel. */
export const PLAN_SEVERITY: AuditSeverity = 'high';

/** The severity of an approval's decision (approve, reject) and its refusals. */
export const APPROVAL_SEVERITY: AuditSeverity = 'high';

/** The severity of a reclaim (creating the request and confirming the reset). */
export const RECLAIM_SEVERITY: AuditSeverity = 'critical';

/** Actions graded high besides the power verbs: each changes what runs, then reboots. */
const CHANGES_WHAT_RUNS: readonly string[] = ['upgrade', 'firmware'];

/** The severity of an attempt of a server action (an unknown action is graded medium). */
export function serverActionSeverity(action: string): AuditSeverity {
  return (POWER_VERBS as readonly string[]).includes(action) ||
    CHANGES_WHAT_RUNS.includes(action)
    ? 'high'
    : 'medium';
}

/**
 * How a call reached the plugin, recorded as `via` on every event: `http` for the
 * routes, `actions` for the Backstage actions registry (MCP clients through
 * `@backstage/plugin-mcp-actions-backend`, or another plugin's ActionsService).
 */
export type CallVia = 'http' | 'actions';
