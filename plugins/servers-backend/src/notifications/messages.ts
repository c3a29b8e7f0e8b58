/*
 * What each of Rackside's notifications says: pure functions of the object (and, for
 * the workload owners, of the entities the drain evicts), so every backend replica that
 * sees the same change sends the same notification, which then replaces itself.
 */
import {
  completedOutcome,
  quorumNumbersText,
  type AffectedEntity,
  type MachineReclaim,
} from '@rackside/plugin-servers-common';
import type { MaintenanceObject } from '../cluster/types';
import { NOTIFICATION_TOPICS, type ServersNotification } from './notifier';

/** The path of a maintenance's page in the portal. */
export function maintenanceLink(cluster: string, name: string): string {
  return `/servers/maintenances/${encodeURIComponent(
    cluster,
  )}/${encodeURIComponent(name)}`;
}

/** The path of the Add node page, where reclaims are followed. */
export const ADD_NODE_LINK = '/servers/add-node';

/**
 * The recipients of a `requestedBy`: the entity ref of a user or group, lowercased
 * as the catalog keeps it; none for a Kubernetes user (an object made with kubectl),
 * who has no Backstage inbox.
 */
export function requesterRecipients(requestedBy?: string): string[] {
  const match = /^(user|group):(?:([^:/]+)\/)?([^:/]+)$/i.exec(
    requestedBy?.trim() ?? '',
  );
  if (!match) return [];
  const [, kind, namespace, name] = match;
  return [`${kind}:${namespace ?? 'default'}/${name}`.toLowerCase()];
}

/** Text without its closing full stop (to go on with numbers). */
function withoutStop(text: string): string {
  return text.trim().replace(/[.!?]+$/, '');
}

/** Text as a sentence: it ends with a full stop (or its own ! or ?). */
export function sentence(text: string): string {
  const t = text.trim();
  return /[.!?]$/.test(t) ? t : `${t}.`;
}

/** A timestamp as a person reads it in a notification. */
export function when(at?: string): string {
  if (!at) return 'at an unknown time';
  const date = new Date(at);
  if (Number.isNaN(date.getTime())) return `at ${at}`;
  return `at ${date.toISOString().slice(0, 16).replace('T', ' ')} UTC`;
}

const INTENT_NOUN: Record<MaintenanceObject['spec']['intent'], string> = {
  cordon: 'cordon',
  drain: 'drain',
  reboot: 'reboot',
  shutdown: 'shutdown',
  upgrade: 'Talos upgrade',
  firmware: 'firmware update',
};

/** "The drain of worker-3 (plant-a)". */
function subject(cluster: string, m: MaintenanceObject): string {
  return `The ${INTENT_NOUN[m.spec.intent]} of ${m.spec.nodeName} (${cluster})`;
}

/** When the maintenance reached its current phase: its last history entry, or completedAt. */
function endedAt(m: MaintenanceObject): string | undefined {
  const history = m.status?.history ?? [];
  const last = history[history.length - 1];
  if (last && last.phase === m.status?.phase) return last.at;
  return m.status?.completedAt;
}

/**
 * The requester's notification of a maintenance that ended: Complete (normal),
 * Refused (high, with the refusal's reason and quorum numbers) or Failed (critical:
 * the node is left cordoned and someone has to look). Undefined in any other phase.
 */
export function maintenanceOutcome(
  cluster: string,
  m: MaintenanceObject,
): ServersNotification | undefined {
  const phase = m.status?.phase;
  const recipients = requesterRecipients(m.spec.requestedBy);
  const base = {
    recipients,
    link: maintenanceLink(cluster, m.metadata.name),
    scope: m.metadata.name,
    topic: NOTIFICATION_TOPICS.maintenance,
  };
  const why = `Requested for: ${m.spec.reason}`;
  const at = when(endedAt(m));
  if (phase === 'Complete') {
    // Complete says the node is back, not that its verb happened.
    const outcome = completedOutcome(m);
    const said = {
      done: {
        title: 'is complete',
        description: `${m.spec.nodeName} is back in service`,
      },
      abandoned: {
        title: 'was abandoned',
        description: `${m.spec.nodeName} is back as it was before the maintenance`,
      },
      'without-verb': {
        title: `ended without the ${INTENT_NOUN[m.spec.intent]}`,
        description: `${m.spec.nodeName} is back in service, but no ${
          INTENT_NOUN[m.spec.intent]
        } was done: ${outcome.kind === 'without-verb' ? outcome.text : ''}`,
      },
    }[outcome.kind];
    return {
      ...base,
      severity: 'normal',
      title: `${subject(cluster, m)} ${said.title}`,
      description: `${said.description} (${at}). ${why}`,
    };
  }
  if (phase === 'Refused') {
    const refusal = m.status?.refusal;
    // The numbers in the words of the portal and the operator ("members 3, quorum 2, ready 2, margin 0").
    const numbers = refusal && quorumNumbersText(refusal);
    const blocking = refusal?.blockingMaintenance
      ? ` It collided with maintenance ${refusal.blockingMaintenance}.`
      : '';
    return {
      ...base,
      severity: 'high',
      title: `${subject(cluster, m)} was refused`,
      description: `${withoutStop(
        refusal?.reason ?? m.status?.message ?? 'The operator refused it',
      )}${numbers ? ` (${numbers})` : ''}.${blocking} Refused ${at}. ${why}`,
    };
  }
  if (phase === 'Failed') {
    const drain = m.status?.drain;
    const left = drain?.pendingPods?.length
      ? ` Pods still on the node: ${drain.pendingPods.join(', ')}.`
      : '';
    return {
      ...base,
      severity: 'critical',
      title: `${subject(cluster, m)} failed`,
      description: `${sentence(
        m.status?.message ?? drain?.lastError ?? 'The operator gave up',
      )} The node is left cordoned.${left} Failed ${at}. ${why}`,
    };
  }
  return undefined;
}

/**
 * The requester's notification of a drain a PodDisruptionBudget has blocked for longer
 * than `blockedAfter` (high): which budgets refuse which pods, and the apiserver's words.
 */
export function drainBlocked(
  cluster: string,
  m: MaintenanceObject,
  blockedAfterMs: number,
): ServersNotification | undefined {
  const blocked = m.status?.drain?.blockedBy ?? [];
  if (blocked.length === 0) return undefined;
  const byBudget = new Map<string, string[]>();
  for (const b of blocked) {
    const namespace = b.pod.split('/')[0];
    const key = `${namespace}/${b.pdb}`;
    byBudget.set(key, [...(byBudget.get(key) ?? []), b.pod]);
  }
  const budgets = [...byBudget.keys()];
  const detail = [...byBudget]
    .map(
      ([budget, pods]) =>
        `PodDisruptionBudget ${budget} refuses the eviction of ${pods.join(
          ', ',
        )}`,
    )
    .join('; ');
  return {
    recipients: requesterRecipients(m.spec.requestedBy),
    link: maintenanceLink(cluster, m.metadata.name),
    scope: m.metadata.name,
    topic: NOTIFICATION_TOPICS.maintenance,
    severity: 'high',
    title: `${subject(cluster, m)} is blocked by ${
      budgets.length === 1
        ? `PodDisruptionBudget ${budgets[0]}`
        : `${budgets.length} PodDisruptionBudgets`
    }`,
    description: `Blocked for more than ${duration(
      blockedAfterMs,
    )}: ${detail}. The apiserver says: ${sentence(
      blocked[0].message,
    )} The drain keeps retrying; give the budget room or abandon the maintenance. Requested for: ${
      m.spec.reason
    }`,
  };
}

/** "10 minutes", "90 seconds". */
export function duration(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds % 3600 === 0 && seconds >= 3600) {
    const h = seconds / 3600;
    return `${h} hour${h === 1 ? '' : 's'}`;
  }
  if (seconds % 60 === 0 && seconds >= 60) {
    const m = seconds / 60;
    return `${m} minute${m === 1 ? '' : 's'}`;
  }
  return `${seconds} second${seconds === 1 ? '' : 's'}`;
}

/**
 * The requester's notification of a reclaim that ended: Done (normal), Expired (high:
 * nothing was reset, the credential is gone) or Failed (critical: the machine may be
 * reset and in no cluster), each with the operator's result text.
 */
export function reclaimOutcome(
  cluster: string,
  r: MachineReclaim,
): ServersNotification | undefined {
  const phase = r.status?.phase;
  const what = `Reset and add of ${r.spec.address} into ${r.spec.targetCluster} (${cluster})`;
  const result = r.status?.result ? ` ${r.status.result}` : '';
  const why = r.spec.reason ? ` Requested for: ${r.spec.reason}` : '';
  const base = {
    recipients: requesterRecipients(r.spec.requestedBy),
    link: ADD_NODE_LINK,
    scope: r.metadata.name,
    topic: NOTIFICATION_TOPICS.reclaim,
  };
  const uuid = r.status?.machineUUID
    ? ` (machine ${r.status.machineUUID})`
    : '';
  if (phase === 'Done') {
    return {
      ...base,
      severity: 'normal',
      title: `${what} is done`,
      description: `The machine${uuid} was reset and is joining ${r.spec.targetCluster}.${result}${why}`,
    };
  }
  if (phase === 'Expired') {
    return {
      ...base,
      severity: 'high',
      title: `${what} expired`,
      description: `It was not confirmed within ${r.spec.ttlMinutes} minutes: nothing was reset and the stored credential was deleted.${result}${why}`,
    };
  }
  if (phase === 'Failed') {
    return {
      ...base,
      severity: 'critical',
      title: `${what} failed`,
      description: `The machine${uuid} may have been reset without joining: look at it on the Add node page.${result}${why}`,
    };
  }
  return undefined;
}

/**
 * The notifications of the owners of the entities a drain (or the drain of a reboot or
 * shutdown) evicts, one per owner with the owner's own entities: what, where, who and
 * why, and when it started. Entities without an owner reach nobody.
 */
export function workloadOwnerNotices(
  cluster: string,
  m: MaintenanceObject,
  entities: AffectedEntity[],
): ServersNotification[] {
  const byOwner = new Map<string, AffectedEntity[]>();
  for (const e of entities) {
    if (!e.owner) continue;
    byOwner.set(e.owner, [...(byOwner.get(e.owner) ?? []), e]);
  }
  const started = when(
    m.status?.drain?.startedAt ??
      m.status?.history?.find(h => h.phase === 'Draining')?.at,
  );
  const who = m.spec.requestedBy ?? 'someone';
  const what =
    m.spec.intent === 'drain'
      ? 'drained'
      : `drained for a ${INTENT_NOUN[m.spec.intent]}`;
  return [...byOwner].map(([owner, owned]) => {
    const pods = owned.flatMap(e => e.pods);
    return {
      recipients: [owner],
      link: maintenanceLink(cluster, m.metadata.name),
      scope: m.metadata.name,
      topic: NOTIFICATION_TOPICS.workloads,
      severity: 'normal',
      title: `${m.spec.nodeName} (${cluster}) is being ${what}: ${owned
        .map(e => e.title)
        .join(', ')} ${owned.length === 1 ? 'loses' : 'lose'} ${
        pods.length === 1 ? 'a pod' : `${pods.length} pods`
      } there`,
      description: `The ${INTENT_NOUN[m.spec.intent]} of ${
        m.spec.nodeName
      } in cluster ${cluster} started ${started}, requested by ${who}: ${
        m.spec.reason
      }. Evicted (rescheduled elsewhere by their controllers): ${owned
        .map(e => `${e.entityRef} (${e.pods.join(', ')})`)
        .join('; ')}.`,
    };
  });
}
