/*
 * Object gates of MaintenancePlans (docs/plans.md): a condition or a field value on
 * a Kubernetes object, checked before each next step. They read through the operator's
 * identity, and a plan's status is read by anyone who may read plans, so a gate reads
 * nothing it does not need and says nothing it read:
 *
 * - only kinds the chart allows (`operator.planGateReads`, the same list that grants the
 *   operator get, list and watch on them: `--plan-gate-reads`); any other kind is refused;
 * - a namespaced kind only in the gate's namespace (a gate without one is refused), with
 *   its label selector or object name sent to the apiserver, so no kind is ever cached
 *   cluster-wide;
 * - each object is kept as whether it passes, nothing else (not the field, not the
 *   condition's message);
 * - at most {@link MAX_GATE_OBJECTS} objects a gate (more: refused, narrow the selector);
 * - a gate's message says pass or fail and the expected value, never the observed one.
 *
 * ObjectGateWatches keeps one watch per gate an open plan names (at most 8 a plan, the
 * CRD's limit), started when first needed and stopped when no open plan names it any
 * more. A change of a watched object wakes the plans that use it.
 */
import {
  apiGroupOf,
  MAX_GATE_OBJECTS,
  objectGateRefusal,
  type LabelSelector,
  type ObjectGate,
} from '@rackside/plugin-servers-common';
import {
  createWatchCache,
  KubeHttp,
  slimIdentity,
  type RawKubeObject,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import type { KubeConfig } from '@kubernetes/client-node';
import { canonical } from './table';

export { MAX_GATE_OBJECTS };

/** How many failing objects a gate's message names before "and N more". */
const NAMED_FAILURES = 10;

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

/** What a gate keeps of an object: its name and whether it passes, nothing it read. */
export interface GateObject extends RawKubeObject {
  /** passes; fails (present, not the expected value); absent (no such field/condition). */
  gate: 'passes' | 'fails' | 'absent';
}

/**
 * The transform of a gate's watch: an object as whether it passes this gate. Not a
 * kind's slim (servers-node watch/slim): a gate may name any kind, and what it keeps
 * is its verdict on this gate, so only the identity is shared with the slims.
 */
export function slimForGate(
  gate: ObjectGate,
): (obj: RawKubeObject) => GateObject {
  return obj => {
    let state: GateObject['gate'];
    if (gate.condition) {
      const found = (
        (obj.status?.conditions ?? []) as Array<{
          type?: string;
          status?: string;
        }>
      ).find(c => c.type === gate.condition!.type);
      if (!found) state = 'absent';
      else state = found.status === gate.condition.status ? 'passes' : 'fails';
    } else {
      const value = fieldAt(obj, gate.field!.path);
      if (value === undefined) state = 'absent';
      else state = value === gate.field!.value ? 'passes' : 'fails';
    }
    return { ...slimIdentity(obj), gate: state } as GateObject;
  };
}

function describeTarget(gate: ObjectGate): string {
  const where = gate.namespace ? `${gate.namespace}/` : '';
  return gate.objectName
    ? `${gate.kind} ${where}${gate.objectName}`
    : `${gate.kind}s ${
        where ? `in ${gate.namespace} ` : ''
      }matching the selector`;
}

/** What the gate expects, as its message says it: "Ready is True", ".status.x is y". */
function expected(gate: ObjectGate): string {
  return gate.condition
    ? `${gate.condition.type} is ${gate.condition.status}`
    : `${gate.field!.path} is ${gate.field!.value}`;
}

/** Why one object fails the gate, naming only the object and what was expected. */
function failure(gate: ObjectGate, obj: GateObject): string {
  const name = `${obj.metadata?.namespace ? `${obj.metadata.namespace}/` : ''}${
    obj.metadata?.name
  }`;
  if (obj.gate === 'absent') {
    return gate.condition
      ? `${gate.kind} ${name} has no condition ${gate.condition.type}`
      : `${gate.kind} ${name} has no ${gate.field!.path}`;
  }
  return gate.condition
    ? `${gate.kind} ${name}: ${gate.condition.type} is not ${gate.condition.status}`
    : `${gate.kind} ${name}: ${gate.field!.path} is not ${gate.field!.value}`;
}

/** A gate's verdict; `refused`: the gate cannot be checked as written (the plan stops). */
export interface GateVerdict {
  holds: boolean;
  message: string;
  refused?: boolean;
}

/** The gate over the objects its watch holds (already selected by the apiserver). */
export function evaluateObjectGate(
  gate: ObjectGate,
  objects: readonly GateObject[],
): GateVerdict {
  if (objects.length > MAX_GATE_OBJECTS) {
    return {
      holds: false,
      refused: true,
      message: `${describeTarget(gate)}: ${
        objects.length
      } objects, more than the ${MAX_GATE_OBJECTS} a gate may check; narrow its selector`,
    };
  }
  if (objects.length === 0) {
    return { holds: false, message: `no ${describeTarget(gate)}` };
  }
  const failing = objects.filter(o => o.gate !== 'passes');
  if (failing.length > 0) {
    const named = failing.slice(0, NAMED_FAILURES).map(o => failure(gate, o));
    const more =
      failing.length > NAMED_FAILURES
        ? ` and ${failing.length - NAMED_FAILURES} more`
        : '';
    return { holds: false, message: `${named.join('; ')}${more}` };
  }
  return {
    holds: true,
    message: `${describeTarget(gate)} passes (${expected(gate)})`,
  };
}

/** A label selector as the apiserver's `labelSelector` parameter. */
export function labelSelectorText(selector: LabelSelector): string {
  const terms = Object.entries(selector.matchLabels ?? {}).map(
    ([k, v]) => `${k}=${v}`,
  );
  for (const e of selector.matchExpressions ?? []) {
    const values = `(${(e.values ?? []).join(',')})`;
    if (e.operator === 'In') terms.push(`${e.key} in ${values}`);
    else if (e.operator === 'NotIn') terms.push(`${e.key} notin ${values}`);
    else if (e.operator === 'Exists') terms.push(e.key);
    else terms.push(`!${e.key}`);
  }
  return terms.join(',');
}

/** What a gate watches: its objects, and what it checks on them. */
export function gateWatchKey(gate: ObjectGate): string {
  return canonical({
    apiVersion: gate.apiVersion,
    kind: gate.kind,
    namespace: gate.namespace,
    objectName: gate.objectName,
    selector: gate.selector,
    condition: gate.condition,
    field: gate.field,
  });
}

interface GateWatch {
  cache?: WatchCache<GateObject>;
  /** Why there is no cache (the kind is not served, discovery failed). */
  error?: string;
  /** Why the gate is refused as written (a kind not allowed, no namespace). */
  refused?: string;
  starting?: Promise<void>;
}

export interface ObjectGateWatchesOptions {
  kubeConfig: KubeConfig;
  /** The kinds gates may read (`resource.group`): the chart's planGateReads. */
  reads: readonly string[];
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

  verdict(gate: ObjectGate): GateVerdict {
    const watch = this.watches.get(gateWatchKey(gate));
    if (watch?.refused) {
      return { holds: false, refused: true, message: watch.refused };
    }
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
      .then(where => {
        if (this.watches.get(key) !== watch) return;
        if ('refused' in where) {
          watch.refused = where.refused;
          this.options.log?.(`plan gate ${gate.name}: ${where.refused}`);
          this.options.onChange(key);
          return;
        }
        const cache = createWatchCache<GateObject>({
          kubeConfig: this.options.kubeConfig,
          path: where.path,
          name: `plan-gate ${gate.kind}`,
          ...(gate.selector
            ? { labelSelector: labelSelectorText(gate.selector) }
            : {}),
          ...(gate.objectName
            ? { fieldSelector: `metadata.name=${gate.objectName}` }
            : {}),
          transform: slimForGate(gate),
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
        this.options.log?.(`plan gate ${gate.name}: ${watch.error}`);
        this.options.onChange(key);
      });
  }

  /**
   * The collection the gate reads, from API discovery: only an allowed kind, and a
   * namespaced kind only in the gate's namespace.
   */
  private async pathOf(
    gate: ObjectGate,
  ): Promise<{ path: string } | { refused: string }> {
    const group = apiGroupOf(gate.apiVersion);
    const root = group ? `/apis/${gate.apiVersion}` : `/api/${gate.apiVersion}`;
    const list = await this.http.request<{
      resources?: Array<{ name: string; kind: string; namespaced: boolean }>;
    }>({ method: 'GET', path: root });
    const resource = (list.resources ?? []).find(
      r => r.kind === gate.kind && !r.name.includes('/'),
    );
    if (!resource) throw new Error('not served by this cluster');
    const refused = objectGateRefusal(gate, resource, this.options.reads);
    if (refused) return { refused };
    if (!resource.namespaced) return { path: `${root}/${resource.name}` };
    // objectGateRefusal refused a namespaced kind without a namespace.
    return {
      path: `${root}/namespaces/${encodeURIComponent(gate.namespace!)}/${
        resource.name
      }`,
    };
  }
}
