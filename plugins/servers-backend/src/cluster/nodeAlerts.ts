/*
 * Each node's Alertmanager alerts, read once per cluster at most every 30 s however many
 * pages and requests ask (docs/alerts.md, "In the portal"). A read that finds the mapping
 * older than the interval starts one refresh and is answered with what is known; when the
 * refresh changes the mapping, the cluster's change signal tells open pages to fetch
 * again. KubeClusterState also reads every interval, so an open page that reads nothing
 * still hears of a new alert.
 */
import {
  indexNodeAlerts,
  racksideSilenceIdsOf,
  type ServerAlert,
  type ServerAlertSummary,
  type SilenceRecorder,
} from '@rackside/plugin-servers-common';
import type {
  AlertmanagerAlert,
  AlertmanagerApi,
  NodeObject,
} from '@rackside/plugin-servers-node';

/** How often at most a cluster's Alertmanager is read (the design's 30 s). */
export const ALERTS_REFRESH_MS = 30_000;

/**
 * A cluster's alerts as last read, mapped to its nodes.
 *
 * @public
 */
export interface ClusterAlerts {
  /** Each node's alerts (firing, silenced or inhibited); a node without any is absent. */
  byNode: ReadonlyMap<string, readonly ServerAlert[]>;
  /** Every alert as read, any node's or none (a plan's alert gate is about the whole cluster). */
  alerts: readonly AlertmanagerAlert[];
  /** The ids of Rackside's own silences among those holding an alert; absent when unknown. */
  racksideSilenceIds?: ReadonlySet<string>;
  /** When the mapping was last read successfully; absent before the first success. */
  readAt?: string;
  /** Set when the last read failed: the mapping is the one before it (or empty). */
  stale?: { error: string; since: string };
}

/** What a reader needs: the API, the cluster's matcher templates and its nodes now. */
export interface NodeAlertsReaderOptions {
  api: AlertmanagerApi;
  /** `servers.clusters[].alertmanager.matchers`. */
  matchers: readonly string[];
  nodes: () => Promise<NodeObject[]>;
  /**
   * The cluster's NodeMaintenances now: a silence is Rackside's only when one of them
   * recorded its id (servers-common's racksideSilenceIdsOf), never by its marker alone.
   */
  maintenances: () => Promise<readonly SilenceRecorder[]>;
  /** Called when a refresh changed the mapping (or its staleness). */
  onChange: () => void;
  /** Told why a read failed (never a token: the client's errors name no credential). */
  onError?: (error: unknown) => void;
  refreshMs?: number;
  now?: () => number;
}

const SEVERITY_RANK: Record<string, number> = {
  critical: 5,
  page: 5,
  error: 4,
  high: 4,
  major: 4,
  warning: 3,
  medium: 3,
  minor: 2,
  low: 2,
  info: 1,
  informational: 1,
  none: 0,
};

/** Orders severities: known names by rank, an unknown one below `warning` and above `info`. */
export function severityRank(severity: string | undefined): number {
  if (severity === undefined) return -1;
  return SEVERITY_RANK[severity.toLowerCase()] ?? 1.5;
}

/** A row's summary of a node's alerts. */
export function alertSummaryOf(
  alerts: readonly ServerAlert[] | undefined,
  stale: boolean,
): ServerAlertSummary {
  const list = alerts ?? [];
  const firing = list.filter(a => a.state === 'firing');
  const silenced = list.filter(a => a.state === 'silenced').length;
  let highestSeverity: string | undefined;
  for (const alert of firing) {
    if (severityRank(alert.severity) > severityRank(highestSeverity)) {
      highestSeverity = alert.severity;
    }
  }
  return {
    firing: firing.length,
    silenced,
    ...(highestSeverity !== undefined ? { highestSeverity } : {}),
    ...(stale ? { stale: true } : {}),
  };
}

/**
 * What the portal shows of one alert. Silenced: some silence holds it (Alertmanager's
 * `silencedBy`), Rackside's own or a person's; inhibited: another alert covers it;
 * otherwise firing (an `unprocessed` alert has not been judged yet and counts as firing).
 */
export function serverAlertOf(
  alert: AlertmanagerAlert,
  racksideSilenceIds: ReadonlySet<string> | undefined,
): ServerAlert {
  const { silencedBy, inhibitedBy } = alert.status;
  let state: ServerAlert['state'] = 'firing';
  if (silencedBy.length > 0) state = 'silenced';
  else if (inhibitedBy.length > 0) state = 'inhibited';
  const summary = alert.annotations?.summary;
  return {
    fingerprint: alert.fingerprint,
    alertname: alert.labels.alertname ?? '',
    ...(alert.labels.severity !== undefined
      ? { severity: alert.labels.severity }
      : {}),
    state,
    ...(state === 'silenced' && racksideSilenceIds
      ? {
          silencedByRackside: silencedBy.every(id =>
            racksideSilenceIds.has(id),
          ),
        }
      : {}),
    silencedBy,
    startsAt: alert.startsAt,
    ...(summary !== undefined ? { summary } : {}),
    labels: alert.labels,
  };
}

/** Firing first, then by severity, then by name: the order a page lists them in. */
function alertOrder(a: ServerAlert, b: ServerAlert): number {
  const stateRank = { firing: 0, silenced: 1, inhibited: 2 };
  return (
    stateRank[a.state] - stateRank[b.state] ||
    severityRank(b.severity) - severityRank(a.severity) ||
    a.alertname.localeCompare(b.alertname) ||
    a.fingerprint.localeCompare(b.fingerprint)
  );
}

/** Maps alerts to nodes: an alert is a node's when any of its rendered templates holds. */
export function mapAlertsToNodes(
  alerts: readonly AlertmanagerAlert[],
  nodes: readonly NodeObject[],
  templates: readonly string[],
  racksideSilenceIds: ReadonlySet<string> | undefined,
  nowMs: number = Date.now(),
): Map<string, ServerAlert[]> {
  const byNode = new Map<string, ServerAlert[]>();
  if (alerts.length === 0) return byNode;
  // Each alert asks only the nodes it can belong to (servers-common's index): every node
  // of every alert made a large answer cost seconds of the event loop a refresh.
  const nodesOf = indexNodeAlerts(
    templates,
    nodes.map(node => ({
      name: node.metadata?.name ?? '',
      labels: node.metadata?.labels,
    })),
  );
  for (const alert of alerts) {
    // An alert that has ended (resolved, kept by Alertmanager for a while) is not shown.
    if (alert.endsAt && Date.parse(alert.endsAt) <= nowMs) continue;
    let shown: ServerAlert | undefined;
    for (const name of nodesOf(alert.labels)) {
      shown ??= serverAlertOf(alert, racksideSilenceIds);
      let list = byNode.get(name);
      if (!list) byNode.set(name, (list = []));
      list.push(shown);
    }
  }
  for (const list of byNode.values()) list.sort(alertOrder);
  return byNode;
}

/** A stable text of a mapping: two reads that show the same have the same digest. */
function mappingDigest(
  byNode: ReadonlyMap<string, readonly ServerAlert[]>,
  stale: boolean,
): string {
  return JSON.stringify([
    stale,
    [...byNode.entries()].sort(([a], [b]) => a.localeCompare(b, 'en')),
  ]);
}

/**
 * One cluster's alert mapping, read lazily (see the file comment). Concurrent readers
 * share one refresh; a refresh starts at most once per `refreshMs`, failed or not, so a
 * down Alertmanager is not asked more often than a healthy one.
 */
export class NodeAlertsReader {
  private current: ClusterAlerts = { byNode: new Map(), alerts: [] };
  private digest = mappingDigest(new Map(), false);
  private startedAt: number | undefined;
  private inflight: Promise<void> | undefined;
  private readonly refreshMs: number;
  private readonly now: () => number;

  constructor(private readonly options: NodeAlertsReaderOptions) {
    this.refreshMs = options.refreshMs ?? ALERTS_REFRESH_MS;
    this.now = options.now ?? Date.now;
  }

  /**
   * The mapping: the first read waits for Alertmanager (so the first page shows alerts);
   * a later read past the interval starts a refresh and answers what is known now.
   */
  async read(): Promise<ClusterAlerts> {
    if (this.startedAt === undefined) {
      await this.refresh();
    } else if (this.inflight) {
      // The first read may still be on its way: wait for it only then.
      if (!this.current.readAt && !this.current.stale) await this.inflight;
    } else if (this.now() - this.startedAt >= this.refreshMs) {
      void this.refresh();
    }
    return this.current;
  }

  /** Starts a refresh unless one is on its way; resolves when it ends (never rejects). */
  private refresh(): Promise<void> {
    if (!this.inflight) {
      this.startedAt = this.now();
      this.inflight = this.load().finally(() => {
        this.inflight = undefined;
      });
    }
    return this.inflight;
  }

  private async load(): Promise<void> {
    const { api, matchers, nodes } = this.options;
    let next: ClusterAlerts;
    try {
      const [alerts, nodeList] = await Promise.all([api.alerts(), nodes()]);
      // Which silences are Rackside's: one more request, and only when an alert is silenced.
      let racksideIds: Set<string> | undefined;
      if (alerts.some(a => a.status.silencedBy.length > 0)) {
        try {
          const [silences, maintenances] = await Promise.all([
            api.silences(),
            this.options.maintenances(),
          ]);
          racksideIds = racksideSilenceIdsOf(silences, maintenances);
        } catch (error) {
          // Silenced is still known; only whose silence it is is not.
          this.options.onError?.(error);
        }
      }
      next = {
        byNode: mapAlertsToNodes(
          alerts,
          nodeList,
          matchers,
          racksideIds,
          this.now(),
        ),
        alerts,
        ...(racksideIds ? { racksideSilenceIds: racksideIds } : {}),
        readAt: new Date(this.now()).toISOString(),
      };
    } catch (error) {
      this.options.onError?.(error);
      next = {
        byNode: this.current.byNode,
        alerts: this.current.alerts,
        ...(this.current.racksideSilenceIds
          ? { racksideSilenceIds: this.current.racksideSilenceIds }
          : {}),
        ...(this.current.readAt ? { readAt: this.current.readAt } : {}),
        stale: {
          error: String((error as Error)?.message ?? error),
          since:
            this.current.stale?.since ?? new Date(this.now()).toISOString(),
        },
      };
    }
    const digest = mappingDigest(next.byNode, next.stale !== undefined);
    this.current = next;
    if (digest !== this.digest) {
      this.digest = digest;
      this.options.onChange();
    }
  }
}
