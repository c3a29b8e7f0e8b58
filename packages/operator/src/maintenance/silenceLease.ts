/*
 * The Alertmanager silence a NodeMaintenance holds on its node's alerts (docs/alerts.md,
 * "What is silenced when"), beside the table rather than in it: shelving is a convenience,
 * never a gate, so no phase waits on it and Alertmanager down changes no transition.
 *
 *   New, Requested            nothing (the node is still in service)
 *   Cordoned .. Returning     hold: one silence per matcher template, renewed every
 *                             --silence-renew to now + --silence-lease, never past
 *                             cordonedAt + --silence-max
 *   Complete                  hold until completedAt + --return-grace, then expire
 *   Complete (abandoned),
 *   Refused, Failed           expire at once
 *   deleted                   expire at once (the controller's delete handler); a delete
 *                             the operator missed lapses with the lease
 *
 * Idempotent across restarts and leaders: every hold first lists the silences and adopts
 * the ones the maintenance recorded in status.alerting.silenceIds; when none is recorded
 * (a crash between a create and its status write), the ones with its exact createdBy, its
 * marker with the uid of the object, and a start after its cordon (servers-common's
 * isAdoptableSilence), so the lease finds its own again instead of making a second, and
 * never renews, shortens or expires a person's silence that copies the marker.
 *
 * Alertmanager failing, in any way, never holds the maintenance: `sync` answers in every
 * case, recording an unreachable Alertmanager in status.alerting.failedAt (retried after
 * --silence-renew), and the table's row runs after it. The decision (`silenceDuty`) is pure; the
 * Alertmanager calls and the status write are in `SilenceLease`.
 */
import {
  alertMatcherHolds,
  alertMatcherText,
  isAdoptableSilence,
  racksideSilenceCreatedBy,
  racksideSilenceMarker,
  renderAlertMatchers,
  type AlertMatcher,
  type NodeMaintenance,
  type NodeMaintenanceAlerting,
  type NodeMaintenanceStatus,
} from '@rackside/plugin-servers-common';
import {
  AlertmanagerUnreachableError,
  type AlertmanagerApi,
  type AlertmanagerSilence,
} from '@rackside/plugin-servers-node';
import { NotLeadingError } from '../runtime/leaderElection';
import { isoOf, phaseOf, type Clock } from '../runtime/lifecycle/table';
import { withCondition } from './powerSend';
import type { NodeView } from './types';

export const ALERTS_SILENCED = 'AlertsSilenced' as const;

/** A new silence starts this far ahead (see `hold`). */
const START_AHEAD_MS = 1000;

/** Event reasons and the condition's reasons of the silence lease. */
export const SilenceReason = {
  Silenced: 'Silenced',
  SilenceCreated: 'SilenceCreated',
  SilenceExpired: 'SilenceExpired',
  Expired: 'Expired',
  AlertmanagerUnreachable: 'AlertmanagerUnreachable',
} as const;

/** The operator's flags the lease follows (config.ts AlertingConfig). */
export interface SilenceSettings {
  matchers: readonly string[];
  silenceLeaseMs: number;
  silenceRenewMs: number;
  silenceMaxMs: number;
  returnGraceMs: number;
  /** The maintenance's page in the portal (`{{name}}` for its name); absent: not linked. */
  maintenanceUrl?: string;
}

/** What the lease owes a maintenance now. */
export type SilenceDuty =
  | { kind: 'none' }
  /** Hold the silences: create or adopt, renew if `renew`, then look again in `nextMs`. */
  | { kind: 'hold'; renew: boolean; nextMs: number }
  /** Expire them (the maintenance ended). */
  | { kind: 'expire'; why: string }
  /** Alertmanager failed a moment ago: try again in `nextMs`, not on every wake. */
  | { kind: 'retry'; nextMs: number };

const HOLDING_PHASES = new Set([
  'Cordoned',
  'Draining',
  'Drained',
  'Rebooting',
  'PoweredOff',
  'Returning',
]);

function ms(timestamp: string | undefined): number | undefined {
  const t = Date.parse(timestamp ?? '');
  return Number.isFinite(t) ? t : undefined;
}

/** When this maintenance's silences may last until at most (cordonedAt + --silence-max). */
export function silenceCap(
  nm: NodeMaintenance,
  settings: SilenceSettings,
): number | undefined {
  const since = ms(nm.status?.cordonedAt);
  return since === undefined ? undefined : since + settings.silenceMaxMs;
}

/** The decision for one maintenance at `now` (pure: the table's reading of the lease). */
export function silenceDuty(
  nm: NodeMaintenance,
  settings: SilenceSettings,
  now: number,
): SilenceDuty {
  const phase = phaseOf(nm);
  const alerting = nm.status?.alerting;
  // Never held (refused at admission, or ended before the cordon), or already expired. A
  // maintenance that ended without status.alerting ended before Alertmanager was configured
  // (the hold is written before the table moves on): nothing to expire, nothing to write.
  const ended =
    phase === 'Complete' || phase === 'Refused' || phase === 'Failed';
  const held =
    alerting !== undefined || (nm.status?.cordonedAt !== undefined && !ended);
  if (!held || alerting?.expiredAt) return { kind: 'none' };
  // After a failure the next try waits one renewal: every own status write wakes the
  // maintenance, and a try per wake would hammer a down Alertmanager.
  const failedAt = ms(alerting?.failedAt);
  if (failedAt !== undefined && failedAt + settings.silenceRenewMs > now) {
    return { kind: 'retry', nextMs: failedAt + settings.silenceRenewMs - now };
  }
  if (nm.status?.abandoned) {
    return { kind: 'expire', why: 'the maintenance was abandoned' };
  }
  if (phase === 'Refused' || phase === 'Failed') {
    return { kind: 'expire', why: `the maintenance ended ${phase}` };
  }
  const renewedAt = ms(alerting?.renewedAt);
  const renewDue =
    renewedAt === undefined ? 0 : renewedAt + settings.silenceRenewMs - now;
  const renew = renewDue <= 0;
  const nextRenewal = renew ? settings.silenceRenewMs : renewDue;
  if (phase === 'Complete') {
    const completed = ms(nm.status?.completedAt) ?? now;
    const graceLeft = completed + settings.returnGraceMs - now;
    if (graceLeft <= 0) {
      return {
        kind: 'expire',
        why: 'the node is back and the return grace has passed',
      };
    }
    return { kind: 'hold', renew, nextMs: Math.min(nextRenewal, graceLeft) };
  }
  if (!HOLDING_PHASES.has(phase)) return { kind: 'none' };
  return { kind: 'hold', renew, nextMs: nextRenewal };
}

function sameMatcher(a: AlertMatcher, b: AlertMatcher): boolean {
  return (
    a.name === b.name &&
    a.value === b.value &&
    a.isRegex === b.isRegex &&
    a.isEqual === b.isEqual
  );
}

/**
 * The node's rendered matchers a silence may carry: Alertmanager refuses a silence whose
 * matchers all match the empty label (it would silence every alert without that label),
 * so an alternative rendered so (a `{{labels.KEY}}` the node lacks) is left out.
 */
export function silenceAlternatives(
  settings: SilenceSettings,
  node: { name: string; labels?: Record<string, string> },
): AlertMatcher[] {
  return renderAlertMatchers(settings.matchers, node).filter(
    m => !alertMatcherHolds(m, {}),
  );
}

/** The comment of a maintenance's silence: who reads it in Alertmanager's UI learns why. */
export function silenceComment(
  nm: NodeMaintenance,
  maintenanceUrl?: string,
): string {
  const marker = racksideSilenceMarker({
    name: nm.metadata.name,
    uid: nm.metadata.uid ?? '',
  });
  const page = maintenanceUrl
    ? ` ${maintenanceUrl.replace(
        /\{\{name\}\}/g,
        encodeURIComponent(nm.metadata.name),
      )}`
    : '';
  return `Rackside maintenance ${nm.metadata.name}: ${nm.spec.intent} of ${nm.spec.nodeName}, reason: ${nm.spec.reason}${page} ${marker}`;
}

export interface SilenceLeasePorts extends Clock {
  alertmanager: AlertmanagerApi;
  settings: SilenceSettings;
  node(name: string): NodeView | undefined;
  /** The reconciler's status write (conditional on the resourceVersion: a stale copy gets a 409). */
  status: {
    write(
      nm: NodeMaintenance,
      status: NodeMaintenanceStatus,
    ): Promise<NodeMaintenance>;
  };
  events: {
    record(
      nm: NodeMaintenance,
      type: 'Normal' | 'Warning',
      reason: string,
      message: string,
    ): Promise<void>;
  };
  /** rackside_alertmanager_errors_total{operation}. */
  onError(operation: 'list' | 'create' | 'renew' | 'expire'): void;
  log?: (message: string) => void;
}

type Conditions = NonNullable<NodeMaintenanceStatus['conditions']>;

class Unreachable extends Error {
  constructor(
    readonly operation: 'list' | 'create' | 'renew' | 'expire',
    cause: Error,
  ) {
    super(cause.message);
  }
}

/** Runs the lease's duty for a maintenance: the Alertmanager calls, then the status write. */
export class SilenceLease {
  constructor(private readonly ports: SilenceLeasePorts) {}

  /**
   * Brings the silences in line with the maintenance; answers the written maintenance (or
   * the same one when nothing was written) and when to look again. Never throws: the
   * silence is a convenience, and whatever fails here (Alertmanager, the lease's own status
   * write) is logged and tried again later while the maintenance's own step goes on.
   */
  async sync(
    nm: NodeMaintenance,
  ): Promise<{ nm: NodeMaintenance; requeueAfterMs?: number }> {
    try {
      return await this.syncOrThrow(nm);
    } catch (error) {
      if (!(error instanceof NotLeadingError)) {
        this.ports.log?.(
          `${nm.metadata.name}: the silence lease did not complete (${
            (error as Error)?.message ?? String(error)
          }); the maintenance goes on, tried again in ${Math.round(
            this.ports.settings.silenceRenewMs / 1000,
          )} s`,
        );
      }
      return { nm, requeueAfterMs: this.ports.settings.silenceRenewMs };
    }
  }

  private async syncOrThrow(
    nm: NodeMaintenance,
  ): Promise<{ nm: NodeMaintenance; requeueAfterMs?: number }> {
    const { settings } = this.ports;
    const now = this.ports.now();
    const duty = silenceDuty(nm, settings, now);
    if (duty.kind === 'none') return { nm };
    if (duty.kind === 'retry') return { nm, requeueAfterMs: duty.nextMs };
    if (duty.kind === 'expire') return { nm: await this.expire(nm, duty.why) };
    const alerting = nm.status?.alerting;
    const cap = silenceCap(nm, settings) ?? now + settings.silenceLeaseMs;
    if (!duty.renew && cap > now) {
      // Woken at the cap too, so the condition stops saying Silenced when it ends.
      return { nm, requeueAfterMs: Math.min(duty.nextMs, cap - now) };
    }
    if (cap <= now) {
      // Past the maximum: no renewal; the silence ends at the cap by itself.
      if (this.condition(nm)?.reason === SilenceReason.Expired) {
        return { nm };
      }
      return {
        nm: await this.write(
          nm,
          { ...alerting, silenceIds: alerting?.silenceIds ?? [] },
          {
            status: 'False',
            reason: SilenceReason.Expired,
            message: `the silence reached its maximum (--silence-max ${Math.round(
              settings.silenceMaxMs / 60_000,
            )} min after the cordon) and was not renewed`,
          },
        ),
      };
    }
    try {
      const result = await this.hold(
        nm,
        Math.min(now + settings.silenceLeaseMs, cap),
      );
      const written = await this.write(
        nm,
        {
          silenceIds: result.ids,
          until: new Date(result.until).toISOString(),
          renewedAt: isoOf(this.ports),
        },
        {
          status: 'True',
          reason: SilenceReason.Silenced,
          message: `${result.ids.length} silence(s) on ${
            nm.spec.nodeName
          }'s alerts until ${new Date(result.until).toISOString()}`,
        },
      );
      if (result.created.length > 0) {
        await this.ports.events.record(
          written,
          'Normal',
          SilenceReason.SilenceCreated,
          `silenced ${
            nm.spec.nodeName
          }'s alerts in Alertmanager (${result.created.join(
            ', ',
          )}) until ${new Date(result.until).toISOString()}`,
        );
      }
      return { nm: written, requeueAfterMs: duty.nextMs };
    } catch (error) {
      if (!(error instanceof Unreachable)) throw error;
      return {
        nm: await this.unreachable(nm, error),
        requeueAfterMs: settings.silenceRenewMs,
      };
    }
  }

  /** Silences of this maintenance that Alertmanager holds (pending or active). */
  private async own(nm: NodeMaintenance): Promise<AlertmanagerSilence[]> {
    // The owner from the object itself: its uid, requester, cordon and recorded ids.
    const owner = {
      name: nm.metadata.name,
      uid: nm.metadata.uid ?? '',
      requestedBy: nm.spec.requestedBy ?? 'unknown',
      cordonedAt: nm.status?.cordonedAt,
      recordedIds: nm.status?.alerting?.silenceIds,
    };
    // Unfiltered: Alertmanager's silence filter compares matchers textually, and only the
    // adoption rule says which are ours (a person's silence with the same matchers is not).
    const all = await this.call('list', () =>
      this.ports.alertmanager.silences(),
    );
    return all.filter(
      s => s.status.state !== 'expired' && isAdoptableSilence(s, owner),
    );
  }

  private async hold(
    nm: NodeMaintenance,
    endsAt: number,
  ): Promise<{ ids: string[]; created: string[]; until: number }> {
    const node = this.ports.node(nm.spec.nodeName);
    const alternatives = silenceAlternatives(this.ports.settings, {
      name: nm.spec.nodeName,
      labels: node?.metadata?.labels,
    });
    const existing = await this.own(nm);
    const ids: string[] = [];
    const created: string[] = [];
    const base = {
      endsAt: new Date(endsAt).toISOString(),
      createdBy: racksideSilenceCreatedBy(nm.spec.requestedBy ?? 'unknown'),
      comment: silenceComment(nm, this.ports.settings.maintenanceUrl),
    };
    for (const matcher of alternatives) {
      const found = existing.find(
        s => s.matchers.length === 1 && sameMatcher(s.matchers[0], matcher),
      );
      const id = await this.call(found ? 'renew' : 'create', () =>
        this.ports.alertmanager.putSilence({
          ...base,
          // An update keeps the id only with the same matchers and the same startsAt;
          // otherwise Alertmanager replaces the silence (a new id, kept in status). A new
          // silence starts a second from now: a start in the past is stored as Alertmanager's
          // own now, in nanoseconds, which its API answers in milliseconds, so no renewal
          // could name it exactly and each would replace the silence.
          ...(found ? { id: found.id } : {}),
          startsAt:
            found?.startsAt ??
            new Date(this.ports.now() + START_AHEAD_MS).toISOString(),
          matchers: [matcher],
        }),
      );
      ids.push(id);
      if (!found) created.push(`${alertMatcherText(matcher)}: ${id}`);
    }
    // Ours, but for an alternative no longer rendered (templates or labels changed).
    for (const stale of existing) {
      if (!ids.includes(stale.id)) {
        await this.call('expire', () =>
          this.ports.alertmanager.expireSilence(stale.id),
        );
      }
    }
    return { ids, created, until: endsAt };
  }

  private async expire(
    nm: NodeMaintenance,
    why: string,
  ): Promise<NodeMaintenance> {
    const alerting = nm.status?.alerting;
    const now = this.ports.now();
    try {
      const ids = new Set(alerting?.silenceIds ?? []);
      for (const s of await this.own(nm)) ids.add(s.id);
      for (const id of ids) {
        await this.call('expire', () =>
          this.ports.alertmanager.expireSilence(id),
        );
      }
      const written = await this.write(
        nm,
        {
          ...alerting,
          silenceIds: [...ids].slice(0, 16),
          failedAt: undefined,
          until: isoOf(this.ports),
          expiredAt: isoOf(this.ports),
        },
        {
          status: 'False',
          reason: SilenceReason.Expired,
          message: `silence expired: ${why}`,
        },
      );
      if (ids.size > 0) {
        await this.ports.events.record(
          written,
          'Normal',
          SilenceReason.SilenceExpired,
          `expired the silence of ${nm.spec.nodeName}'s alerts (${[...ids].join(
            ', ',
          )}): ${why}`,
        );
      }
      return written;
    } catch (error) {
      if (!(error instanceof Unreachable)) throw error;
      // A silence past its end has lapsed by itself: nothing is left to expire.
      const until = ms(alerting?.until);
      if (until === undefined || until <= now) {
        return this.write(
          nm,
          {
            ...alerting,
            silenceIds: alerting?.silenceIds ?? [],
            failedAt: undefined,
            expiredAt: isoOf(this.ports),
          },
          {
            status: 'False',
            reason: SilenceReason.Expired,
            message: `silence lapsed at its end (${why}); Alertmanager could not be asked to expire it: ${error.message}`,
          },
        );
      }
      return this.unreachable(nm, error);
    }
  }

  /** Expires the silences of a deleted maintenance (best effort; the lease bounds a miss). */
  async forget(nm: NodeMaintenance): Promise<void> {
    const alerting = nm.status?.alerting;
    if (!alerting || alerting.expiredAt) return;
    for (const id of alerting.silenceIds) {
      try {
        await this.call('expire', () =>
          this.ports.alertmanager.expireSilence(id),
        );
      } catch (error) {
        this.ports.log?.(
          `${nm.metadata.name} deleted: its silence ${id} lapses at ${
            alerting.until ?? 'its end'
          }: ${(error as Error).message}`,
        );
      }
    }
  }

  private condition(nm: NodeMaintenance) {
    return nm.status?.conditions?.find(c => c.type === ALERTS_SILENCED);
  }

  private async unreachable(
    nm: NodeMaintenance,
    error: Unreachable,
  ): Promise<NodeMaintenance> {
    const before = this.condition(nm);
    const written = await this.write(
      nm,
      {
        ...(nm.status?.alerting ?? { silenceIds: [] }),
        failedAt: isoOf(this.ports),
      },
      {
        status: 'False',
        reason: SilenceReason.AlertmanagerUnreachable,
        message: `Alertmanager could not be reached (${
          error.operation
        }): ${error.message.slice(
          0,
          1024,
        )}; the maintenance goes on, retried every ${Math.round(
          this.ports.settings.silenceRenewMs / 1000,
        )} s`,
      },
    );
    if (before?.reason !== SilenceReason.AlertmanagerUnreachable) {
      await this.ports.events.record(
        written,
        'Warning',
        SilenceReason.AlertmanagerUnreachable,
        `could not ${error.operation} the silence of ${
          nm.spec.nodeName
        }'s alerts: ${error.message.slice(0, 1024)}`,
      );
    }
    return written;
  }

  /**
   * One Alertmanager call: any failure of it (the client's one error type, or anything an
   * implementation throws besides) is counted and becomes Unreachable; only "not leading"
   * passes, as the elector's refusal of a write is no fault of Alertmanager's.
   */
  private async call<T>(
    operation: 'list' | 'create' | 'renew' | 'expire',
    fn: () => Promise<T>,
  ): Promise<T> {
    try {
      return await fn();
    } catch (error) {
      if (error instanceof NotLeadingError) throw error;
      this.ports.onError(operation);
      throw new Unreachable(
        operation,
        error instanceof AlertmanagerUnreachableError
          ? error
          : new Error(
              `Alertmanager: ${(error as Error)?.message ?? String(error)}`,
            ),
      );
    }
  }

  private write(
    nm: NodeMaintenance,
    alerting: NodeMaintenanceAlerting,
    condition: {
      status: 'True' | 'False';
      reason: string;
      message: string;
    },
  ): Promise<NodeMaintenance> {
    const conditions: Conditions = withCondition(
      this.ports,
      nm.status?.conditions,
      {
        type: ALERTS_SILENCED,
        ...condition,
      },
    );
    // The status write is a merge patch: a field left out stays, so a cleared failedAt is
    // sent as null (removed).
    const cleared =
      alerting.failedAt === undefined && nm.status?.alerting?.failedAt
        ? { failedAt: null as unknown as undefined }
        : {};
    return this.ports.status.write(nm, {
      ...nm.status,
      alerting: { ...alerting, ...cleared },
      conditions,
    });
  }
}
