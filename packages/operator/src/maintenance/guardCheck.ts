/*
 * The operator's authoritative quorum check (docs/architecture.md, "The maintenance lifecycle"; docs/architecture.md, "The rules and who calls them"): servers-common's
 * `guard` over `deriveQuorum`, read from the watch caches. It runs twice per power
 * maintenance, both times under the reconciler's admission lock: when the request is
 * admitted (admitRow.ts `admit`) and right before its power verb is recorded
 * (powerRows.ts `sendFromDrained`), so a cluster that changed while the node drained
 * cannot be broken by a verb that was safe when it was asked for.
 */
import {
  type CeremonyLevel,
  ceremonyFor,
  deriveQuorum,
  guard,
  nodeFactsFromNode,
  quorumMaintenances,
  type GuardResult,
  type MaintenanceIntent,
  type NodeFacts,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  type ServerAction,
} from '@rackside/plugin-servers-common';
import { MaintenanceReason } from '../runtime/lifecycle/reasons';
import type { ClusterView, Decision, RefusalCause } from './types';

const ACTION_OF_INTENT: Record<MaintenanceIntent, ServerAction> = {
  cordon: 'cordon',
  drain: 'drain',
  reboot: 'reboot',
  shutdown: 'shutdown',
  // The guard judges an upgrade and a firmware update as the reboot they end with
  // (servers-common rules/guard.ts), and names them as the backend's view does.
  upgrade: 'upgrade',
  firmware: 'firmware',
};

/** The guard's verdict with the ready count the refusal and the admission record keep. */
export interface QuorumCheck {
  result: GuardResult;
  ready?: number;
}

/**
 * The ceremony rung of the request at the guard's verdict now (servers-common
 * `ceremonyFor`): what an approval's rung is compared with (approvalRows.ts).
 */
export function rungOf(nm: NodeMaintenance, check: QuorumCheck): CeremonyLevel {
  return ceremonyFor(ACTION_OF_INTENT[nm.spec.intent], check.result.verdict)
    .level;
}

/** When a maintenance was admitted: its admission record, else its first history entry. */
function admittedAt(nm: NodeMaintenance): string {
  return (
    nm.status?.admission?.at ??
    nm.status?.history?.[0]?.at ??
    nm.metadata.creationTimestamp ??
    ''
  );
}

/** Admission order; the name breaks a tie so two maintenances never both come first. */
function admittedBefore(a: NodeMaintenance, b: NodeMaintenance): boolean {
  const ta = admittedAt(a);
  const tb = admittedAt(b);
  if (ta !== tb) return ta < tb;
  return (a.metadata.name ?? '') < (b.metadata.name ?? '');
}

function hasRecordedVerb(nm: NodeMaintenance): boolean {
  const power = nm.status?.power;
  return !!(
    power?.reboot ||
    power?.shutdown ||
    power?.upgrade ||
    power?.firmware
  );
}

/**
 * Runs the guard for `nm` against the other maintenances.
 *
 * At admission (`at: 'admission'`) every other admitted maintenance counts, exactly as the
 * backend counts them: the margin an admitted power request will spend is spoken for.
 * Before sending (`at: 'send'`) the same maintenances count that counted when this one was
 * admitted (those admitted before it), plus any whose verb is already on record. Counting
 * a maintenance admitted later as well would make two requests that both became ready to
 * send refuse each other, and neither would run; ordering them by admission lets the
 * first through and the second sees it as down.
 */
export function checkQuorum(
  nm: NodeMaintenance,
  view: ClusterView,
  at: 'admission' | 'send',
): QuorumCheck {
  const nodes: NodeFacts[] = view.nodes().map(nodeFactsFromNode);
  // servers-common decides which maintenances count (the admitted, open ones), for the
  // backend's view and request check too; at send time only those admitted before.
  const facts = quorumMaintenances(
    view
      .maintenances()
      .filter(m => m.metadata.name !== nm.metadata.name)
      .filter(
        m => at === 'admission' || admittedBefore(m, nm) || hasRecordedVerb(m),
      ),
  );
  const derivation = deriveQuorum(nodes, facts);
  const result = guard(
    { action: ACTION_OF_INTENT[nm.spec.intent], nodeName: nm.spec.nodeName },
    derivation,
    nodes,
  );
  return { result, ready: derivation.derived ? derivation.ready : undefined };
}

/** The numbers of a check, as `status.refusal` and `status.admission` keep them. */
export function checkNumbers(
  check: QuorumCheck,
): Pick<
  NonNullable<NodeMaintenanceStatus['refusal']>,
  'members' | 'quorum' | 'ready' | 'margin'
> {
  return {
    members: check.result.members ?? undefined,
    quorum: check.result.quorum ?? undefined,
    ready: check.ready,
    margin: check.result.margin ?? undefined,
  };
}

/** The Refused transition every refusal writes, at admission or at send time. */
export function refuse(
  message: string,
  cause: RefusalCause,
  refusal: NonNullable<NodeMaintenanceStatus['refusal']>,
): Decision {
  return {
    kind: 'transition',
    to: 'Refused',
    message,
    status: { refusal },
    event: { type: 'Warning', reason: MaintenanceReason.Refused },
    refusal: cause,
  };
}
