/*
 * Object gates of MaintenancePlans (DESIGN section 15): a condition or a field value on
 * any Kubernetes object, checked before each next step. evaluateObjectGate is the rule;
 * ObjectGateWatches keeps one watch per (apiVersion, kind, namespace) that an open plan
 * names (at most 8 gates a plan), started when first needed and stopped when no open
 * plan names it any more. A change of a watched object wakes the plans that use it.
 */
import {
  matchesLabelSelector,
  type ObjectGate,
} from '@rackside/plugin-servers-common';
import {
  createWatchCache,
  KubeHttp,
  type RawKubeObject,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import type { KubeConfig } from '@kubernetes/client-node';

type Obj = RawKubeObject & Record<string, any>;

/** The value at a dotted path (`.status.ceph.health`), as a string; undefined if absent. */
export function fieldAt(obj: unknown, path: string): string | undefined {
  let current: any = obj;
  for (const part of path.split('.').filter(Boolean)) {
    if (current === null || typeof current !== 'object') return undefined;
    current = current[part];
  }
  if (current === undefined || current === null) return undefined;
  return typeof current === 'object'
    ? JSON.stringify(current)
    : String(current);
}

function describeTarget(gate: ObjectGate): string {
  const where = gate.namespace ? `${gate.namespace}/` : '';
  return gate.objectName
    ? `${gate.kind} ${where}${gate.objectName}`
    : `${gate.kind}s ${
        where ? `in ${gate.namespace} ` : ''
      }matching the selector`;
}

/** Whether one object passes the gate, and if not why. */
function passes(gate: ObjectGate, obj: Obj): string | undefined {
  const name = `${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${
    obj.metadata?.name
  }`;
  if (gate.condition) {
    const found = (obj.status?.conditions ?? []).find(
      (c: { type?: string }) => c.type === gate.condition!.type,
    );
    if (!found)
      return `${gate.kind} ${name} has no condition ${gate.condition.type}`;
    if (found.status !== gate.condition.status) {
      return `${gate.kind} ${name}: ${gate.condition.type} is ${found.status}${
        found.message ? ` (${found.message})` : ''
      }, not ${gate.condition.status}`;
    }
    return undefined;
  }
  const value = fieldAt(obj, gate.field!.path);
  if (value !== gate.field!.value) {
    return `${gate.kind} ${name}: ${gate.field!.path} is ${
      value === undefined ? 'absent' : value
    }, not ${gate.field!.value}`;
  }
  return undefined;
}

/** The gate over the objects of its kind (and namespace) that are there now. */
export function evaluateObjectGate(
  gate: ObjectGate,
  objects: readonly Obj[],
): { holds: boolean; message: string } {
  const targets = objects.filter(o =>
    gate.objectName
      ? o.metadata?.name === gate.objectName
      : matchesLabelSelector(
          gate.selector!,
          (o.metadata as { labels?: Record<string, string> } | undefined)
            ?.labels,
        ),
  );
  if (targets.length === 0) {
    return { holds: false, message: `no ${describeTarget(gate)}` };
  }
  const failing = targets.map(o => passes(gate, o)).filter(Boolean);
  if (failing.length > 0) {
    return { holds: false, message: failing.join('; ') };
  }
  return { holds: true, message: `${describeTarget(gate)} passes` };
}

/** What a gate watches: one collection. */
export function gateWatchKey(gate: ObjectGate): string {
  return `${gate.apiVersion}|${gate.kind}|${gate.namespace ?? ''}`;
}

interface GateWatch {
  cache?: WatchCache<Obj>;
  /** Why there is no cache (the kind is not served, discovery failed). */
  error?: string;
  starting?: Promise<void>;
}

export interface ObjectGateWatchesOptions {
  kubeConfig: KubeConfig;
  /** A watched object changed: wake the plans that use this key. */
  onChange(key: string): void;
  log?: (message: string) => void;
}

/** The watches the open plans' object gates need, and their verdicts. */
export class ObjectGateWatches {
  private readonly watches = new Map<string, GateWatch>();
  private readonly http: KubeHttp;

  constructor(private readonly options: ObjectGateWatchesOptions) {
    this.http = new KubeHttp(options.kubeConfig);
  }

  /** Keeps exactly the watches these gates need (starting new ones, stopping others). */
  need(gates: readonly ObjectGate[]): void {
    const wanted = new Map(gates.map(g => [gateWatchKey(g), g]));
    for (const [key, watch] of this.watches) {
      if (!wanted.has(key)) {
        this.watches.delete(key);
        void watch.cache?.stop();
      }
    }
    for (const [key, gate] of wanted) {
      if (!this.watches.has(key)) this.start(key, gate);
    }
  }

  verdict(gate: ObjectGate): { holds: boolean; message: string } {
    const watch = this.watches.get(gateWatchKey(gate));
    if (watch?.error) return { holds: false, message: watch.error };
    if (!watch?.cache || !watch.cache.hasSynced()) {
      const lastError = watch?.cache?.status().lastError;
      return {
        holds: false,
        message: lastError
          ? `cannot read ${gate.kind} objects: ${lastError}`
          : `reading ${gate.kind} objects`,
      };
    }
    return evaluateObjectGate(gate, watch.cache.list());
  }

  async stop(): Promise<void> {
    const all = [...this.watches.values()];
    this.watches.clear();
    await Promise.all(all.map(w => w.cache?.stop()));
  }

  private start(key: string, gate: ObjectGate): void {
    const watch: GateWatch = {};
    this.watches.set(key, watch);
    watch.starting = this.pathOf(gate)
      .then(path => {
        if (this.watches.get(key) !== watch) return;
        const cache = createWatchCache<Obj>({
          kubeConfig: this.options.kubeConfig,
          path,
          name: `plan-gate ${gate.kind}`,
        });
        watch.cache = cache;
        const wake = () => this.options.onChange(key);
        for (const event of ['add', 'update', 'delete'] as const) {
          cache.on(event, wake);
        }
        cache.synced.then(wake, () => {});
      })
      .catch(error => {
        watch.error = `${gate.apiVersion} ${gate.kind}: ${
          (error as Error).message
        }`;
        this.options.log?.(`plan gate ${key}: ${watch.error}`);
        this.options.onChange(key);
      });
  }

  /** The collection path of the gate's kind, from API discovery. */
  private async pathOf(gate: ObjectGate): Promise<string> {
    const root = gate.apiVersion.includes('/')
      ? `/apis/${gate.apiVersion}`
      : `/api/${gate.apiVersion}`;
    const list = await this.http.request<{
      resources?: Array<{ name: string; kind: string; namespaced: boolean }>;
    }>({ method: 'GET', path: root });
    const resource = (list.resources ?? []).find(
      r => r.kind === gate.kind && !r.name.includes('/'),
    );
    if (!resource) throw new Error('not served by this cluster');
    if (resource.namespaced && gate.namespace) {
      return `${root}/namespaces/${encodeURIComponent(gate.namespace)}/${
        resource.name
      }`;
    }
    return `${root}/${resource.name}`;
  }
}
