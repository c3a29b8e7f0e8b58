/*
 * A server and a maintenance as the servers routes answer them: the row of the list, the
 * detail with every action offered or not and why, the health reading. What every
 * feature reads of a cluster (the snapshot, the row keys) is in cluster/.
 */
import {
  nodeRolesOf,
  ceremonyFor,
  failedPartsOf,
  guard,
  hardwareHealthRaise,
  holdsNodeCordoned,
  isPowerVerb,
  type MaintenanceState,
  isOpen,
  nodeFactsFromNode,
  whyNotApplicable,
  type NodeState,
  POWER_VERBS,
  SERVER_ACTIONS,
  talosVersionOfOsImage,
  type MaintenancePhase,
  type NodeFacts,
  type ServerAction,
  type ActionOffer,
  type MaintenanceResponse,
  type ServerFields,
  type ServerHealth,
  type ServerHealthDetail,
  type ServerHealthSummary,
  type ServerListItem,
  type ServerResponse,
} from '@rackside/plugin-servers-common';
import type { NodeObject } from '@rackside/plugin-servers-node';
import { alertSummaryOfNode } from '../cluster/rowKeys';
import { installCheck, powerCheck } from '../cluster/snapshot';
import type {
  ClusterSnapshot,
  MaintenanceObject,
  ServerBmcRecord,
} from '../cluster/types';

/** The phase of a maintenance; an object the operator has not seen yet is Requested. */
export function phaseOf(m: MaintenanceObject): MaintenancePhase {
  return (m.status?.phase as MaintenancePhase | undefined) ?? 'Requested';
}

/** Whether a maintenance is still open (servers-common `isOpen`, as the operator reads it). */
export function isActive(m: MaintenanceObject): boolean {
  return isOpen(m);
}

/** What servers-common's maintenance rules read of a maintenance. */
export function maintenanceState(m: MaintenanceObject): MaintenanceState {
  return {
    intent: m.spec.intent,
    // Absent until the operator admits it: the rules read that as not yet admitted.
    phase: m.status?.phase as MaintenancePhase | undefined,
    returnToService: m.spec.returnToService,
    abandon: m.spec.abandon,
    powerOn: m.spec.powerOn,
  };
}

export function maintenanceView(m: MaintenanceObject): MaintenanceResponse {
  const status = m.status ?? {};
  return {
    name: m.metadata.name,
    nodeName: m.spec.nodeName,
    intent: m.spec.intent,
    reason: m.spec.reason,
    requestedBy: m.spec.requestedBy,
    createdAt: m.metadata.creationTimestamp,
    phase: phaseOf(m),
    terminal: !isActive(m),
    returnToService: m.spec.returnToService,
    abandon: m.spec.abandon,
    powerOn: m.spec.powerOn,
    drain: m.spec.drain,
    progress: status.drain,
    conditions: status.conditions ?? [],
    refusal: status.refusal,
    abandoned: status.abandoned,
    history: status.history ?? [],
    power: status.power,
    rebootSentAt: status.rebootSentAt,
    poweredOffAt: status.poweredOffAt,
    powerOnSentAt: status.powerOnSentAt,
    alerting: status.alerting,
    ...(status.hardware ? { hardware: status.hardware } : {}),
    // What an upgrade or a firmware update asked and how far it went (its page shows it).
    ...(m.spec.upgrade
      ? {
          upgrade: {
            request: m.spec.upgrade,
            ...(status.upgrade ? { status: status.upgrade } : {}),
          },
        }
      : {}),
    ...(m.spec.firmware
      ? {
          firmware: {
            request: m.spec.firmware,
            ...(status.firmware ? { status: status.firmware } : {}),
          },
        }
      : {}),
  };
}

/** What a row shows of a health reading. */
export function healthSummaryOf(health: ServerHealth): ServerHealthSummary {
  return {
    rollup: health.rollup,
    ...(health.readAt ? { readAt: health.readAt } : {}),
    failedParts: failedPartsOf(health),
    // What the typed-name rule judges the reading's age and error by (the dialog
    // rebuilds the rung's why from the row).
    ...(health.error !== undefined ? { error: health.error } : {}),
    ...(health.sweepIntervalSeconds
      ? { sweepIntervalSeconds: health.sweepIntervalSeconds }
      : {}),
  };
}

/**
 * The whole reading as the detail route answers it: the fields of `status.health` named
 * one by one (a field the operator adds later is not sent until it is named here), and
 * the refresh asked for last.
 */
export function healthDetailOf(
  health: ServerHealth | undefined,
  refresh: ServerBmcRecord['healthRefresh'],
  firmwareHistory?: ServerBmcRecord['firmwareHistory'],
): ServerHealthDetail | undefined {
  const history = firmwareHistory?.length ? { firmwareHistory } : {};
  if (!health) {
    return refresh
      ? {
          rollup: 'Unknown',
          failedParts: 0,
          parts: [],
          logEntries: [],
          firmware: [],
          missing: [],
          refreshRequestedAt: refresh.requestedAt,
          ...history,
        }
      : undefined;
  }
  return {
    ...healthSummaryOf(health),
    ...(health.state ? { state: health.state } : {}),
    ...(health.error ? { error: health.error } : {}),
    ...(health.answeredRequestAt
      ? { answeredRequestAt: health.answeredRequestAt }
      : {}),
    parts: health.parts ?? [],
    logEntries: health.logEntries ?? [],
    ...(health.logEntriesSkipped
      ? { logEntriesSkipped: health.logEntriesSkipped }
      : {}),
    firmware: health.firmware ?? [],
    missing: health.missing ?? [],
    ...(refresh ? { refreshRequestedAt: refresh.requestedAt } : {}),
    ...history,
  };
}

export type MaintenanceView = MaintenanceResponse;

/** The shared {@link ActionOffer} shape. */
export type ActionView = ActionOffer;

/** What servers-common's applicability rule reads of a node and its open maintenance. */
export function nodeStateOf(
  node: NodeObject,
  facts: NodeFacts,
  active: MaintenanceObject | undefined,
): NodeState {
  return {
    name: facts.name,
    virtual: facts.virtual,
    unschedulable: node.spec?.unschedulable === true,
    open: active && { name: active.metadata.name, ...maintenanceState(active) },
  };
}

/**
 * Whether an action is offered on a node now, and if not, why: the capability rule for
 * the power verbs, then servers-common's applicability rule (the request check applies
 * the same two, commands/performAction.ts).
 */
export function offerOf(
  action: ServerAction,
  node: NodeObject,
  facts: NodeFacts,
  active: MaintenanceObject | undefined,
  snapshot: ClusterSnapshot,
): { offered: boolean; why?: string } {
  if (!facts.virtual && isPowerVerb(action)) {
    // The capability rule: only what the channel advertises for this node.
    const allowed = powerCheck(snapshot, action, facts);
    if (!allowed.ok) return { offered: false, why: allowed.reason };
  }
  if (!facts.virtual && (action === 'upgrade' || action === 'firmware')) {
    // The capability rule of what changes what runs: the talos channel, or a BMC's. A
    // virtual node is refused by the applicability rule below, as for the power verbs.
    const allowed = installCheck(snapshot, action, facts);
    if (!allowed.ok) return { offered: false, why: allowed.reason };
  }
  const why = whyNotApplicable(action, nodeStateOf(node, facts, active));
  return why ? { offered: false, why } : { offered: true };
}

/** What the list and the detail views of a server share. */
function serverBase(
  cluster: string,
  node: NodeObject,
  snapshot: ClusterSnapshot,
) {
  const facts = nodeFactsFromNode(node);
  const labels = { ...(node.metadata?.labels ?? {}) };
  const active = snapshot.activeByNode.get(facts.name);
  const unschedulable = node.spec?.unschedulable === true;
  // A maintenance refused at the moment of acting left the node cordoned and drained:
  // the row shows it (with its refusal) until the node is returned to service.
  const newest = snapshot.newestByNode.get(facts.name);
  const holding =
    !active &&
    newest &&
    holdsNodeCordoned(
      { ...maintenanceState(newest), cordonedAt: newest.status?.cordonedAt },
      unschedulable,
    )
      ? newest
      : undefined;
  const shown = active ?? holding;
  const health = snapshot.bmcHealth.get(facts.name);
  const fields: ServerFields = {
    name: facts.name,
    cluster,
    roles: nodeRolesOf(labels),
    controlPlane: facts.controlPlane,
    virtual: facts.virtual,
    ready: facts.ready,
    unschedulable,
    labels,
    maintenance: shown ? maintenanceView(shown) : undefined,
    powerVerbs: POWER_VERBS.filter(
      verb => powerCheck(snapshot, verb, facts).ok,
    ),
    ...(health ? { health: healthSummaryOf(health) } : {}),
  };
  // The row's Talos version column and the upgrade dialog's "already there" read this.
  const talosVersion = talosVersionOfOsImage(node.status?.nodeInfo?.osImage);
  if (talosVersion) fields.talosVersion = talosVersion;
  const alerts = alertSummaryOfNode(snapshot, facts.name);
  if (alerts) fields.alerts = alerts;
  return { facts, active, fields };
}

/** The ceremony of an action on a node now. */
function ceremonyOn(
  action: ServerAction,
  facts: NodeFacts,
  snapshot: ClusterSnapshot,
) {
  // guard() only looks this node up in the list: hand it just this node, or a list of
  // every server makes the whole page quadratic in the number of servers.
  const { verdict } = guard(
    { action, nodeName: facts.name },
    snapshot.derivation,
    [facts],
  );
  // Returning a server whose BMC reports Critical asks for the typed name, and says why.
  return ceremonyFor(
    action,
    verdict,
    hardwareHealthRaise(action, snapshot.bmcHealth.get(facts.name), Date.now()),
  );
}

/** A server as the detail route answers it: every action, offered or not, and why. */
export function serverView(
  cluster: string,
  node: NodeObject,
  snapshot: ClusterSnapshot,
  allowed: (action: ServerAction) => boolean,
  bmc?: ServerBmcRecord,
): ServerResponse {
  const { facts, active, fields } = serverBase(cluster, node, snapshot);
  const actions = {} as Record<ServerAction, ActionView>;
  for (const action of SERVER_ACTIONS) {
    const offer = offerOf(action, node, facts, active, snapshot);
    actions[action] = {
      offered: offer.offered,
      allowed: allowed(action),
      ceremony: ceremonyOn(action, facts, snapshot),
      ...(offer.why ? { why: offer.why } : {}),
    };
  }
  const health = healthDetailOf(
    bmc?.health ?? snapshot.bmcHealth.get(facts.name),
    bmc?.healthRefresh,
    bmc?.firmwareHistory,
  );
  // The detail carries the whole reading in place of the row's summary.
  const { health: _summary, ...rest } = fields;
  return {
    ...rest,
    ...(health ? { health } : {}),
    systemUUID: node.status?.nodeInfo?.systemUUID,
    actions,
  };
}

/** A server as the list route answers it: only the actions offered and allowed. */
export function serverListItem(
  cluster: string,
  node: NodeObject,
  snapshot: ClusterSnapshot,
  allowed: (action: ServerAction) => boolean,
): ServerListItem {
  const { facts, active, fields } = serverBase(cluster, node, snapshot);
  const actions: ServerListItem['actions'] = {};
  for (const action of SERVER_ACTIONS) {
    if (
      allowed(action) &&
      offerOf(action, node, facts, active, snapshot).offered
    ) {
      actions[action] = ceremonyOn(action, facts, snapshot).level;
    }
  }
  return { ...fields, actions };
}
