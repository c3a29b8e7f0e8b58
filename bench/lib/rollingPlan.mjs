// A rolling MaintenancePlan on the scale fixture (docs/plans.md), the body of
// bench/plan.mjs (intent reboot) and bench/plan-upgrade.mjs (intent upgrade): one plan
// takes N workers through its intent, maxParallel at a time. The workers are Talos machines
// of a Talos emulator the bench starts (the scale fixture's own kwok nodes have no machine
// behind them), each a kwok Node with pods of its own, in the same cluster as the scale
// nodes and pods. Figures: the plan's wall time over the ideal schedule of its own steps,
// and the apiserver requests the operator made during the plan besides watches and writes
// (API Priority and Fairness: FlowSchemas of the operator's ServiceAccount per verb,
// counted from the apiserver's /metrics). The figure is the last line.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  describeLoad,
  loadSampler,
  log,
  machine,
  percentile,
  runLogDir,
  seconds,
  sleep,
} from './common.mjs';
import { startOperatorProcess } from './operator.mjs';
import { benchRack, boundPod, ensureScale, SCALE_LABEL } from './rack.mjs';
import { fixtureNode, readVersions } from '../../e2e/rack/rack.mjs';
import { startTalosEmulator } from '../../e2e/rack/lib/talos.mjs';

/** The flags every rolling-plan bench takes (a bench adds its own). */
export const ROLLING_PLAN_FLAGS = {
  quick: {
    type: 'boolean',
    default: false,
    help: 'smoke run: 10 workers, a 200-node / 2,000-pod fixture',
  },
  rack: {
    type: 'string',
    help: 'use this running rack (e.g. the kept scale fixture) instead of starting one',
  },
  workers: { type: 'number', help: 'workers the plan takes (50)' },
  maxParallel: {
    type: 'number',
    default: 5,
    help: "the plan's maxParallel",
  },
  podsPerWorker: {
    type: 'number',
    default: 10,
    help: 'pods bound to each worker (drained before its verb)',
  },
  nodes: {
    type: 'number',
    help: 'scale fixture nodes to grow first, fixture included (5000)',
  },
  pods: { type: 'number', help: 'scale fixture pods (50000)' },
  rebootDownMs: {
    type: 'number',
    default: 2500,
    help: 'how long a rebooted machine stays down (the emulator default)',
  },
  operator: {
    type: 'string',
    default: 'build',
    help: "run the operator's build (as the image does) or its source",
  },
  timeoutMinutes: {
    type: 'number',
    default: 45,
    help: 'give up after this long',
  },
};

const NS = 'rackside-system';
const LABEL = 'bench.rackside.dev/plan';
const POD_NS = 'bench-plan';
const SECRET = 'bench-plan-talosconfig';
const API = '/apis/rackside.dev/v1alpha1';
const FLOW = '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas';
/** The machines' last address octet: the rack fixture uses 11-42. */
const FIRST_HOST = 100;
const OPERATOR_SA = { namespace: NS, name: 'rackside-operator' };

/** The operator's FlowSchemas, most specific first: [kind, precedence, verbs, groups, resources]. */
const KINDS = [
  ['watch', 91, ['watch'], ['*'], ['*']],
  ['lease', 92, ['*'], ['coordination.k8s.io'], ['leases']],
  ['read-nodes', 93, ['get', 'list'], [''], ['nodes']],
  ['read-pods', 93, ['get', 'list'], [''], ['pods']],
  ['read-secrets', 93, ['get', 'list'], [''], ['secrets']],
  ['read-budgets', 93, ['get', 'list'], ['policy'], ['poddisruptionbudgets']],
  ['read-rackside', 93, ['get', 'list'], ['rackside.dev'], ['*']],
  ['read', 94, ['get', 'list'], ['*'], ['*']],
  ['write', 95, ['*'], ['*'], ['*']],
];

function flowSchemas() {
  return KINDS.map(([kind, precedence, verbs, apiGroups, resources]) => ({
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: {
      name: `bench-plan-operator-${kind}`,
      labels: { [LABEL]: 'true' },
    },
    spec: {
      matchingPrecedence: precedence,
      priorityLevelConfiguration: { name: 'workload-low' },
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'ServiceAccount', serviceAccount: OPERATOR_SA }],
          resourceRules: [
            {
              verbs,
              apiGroups,
              resources,
              clusterScope: true,
              namespaces: ['*'],
            },
          ],
          ...(kind === 'read'
            ? { nonResourceRules: [{ verbs: ['get'], nonResourceURLs: ['*'] }] }
            : {}),
        },
      ],
    },
  }));
}

/** Requests dispatched per bench FlowSchema kind, from the apiserver's /metrics. */
async function dispatched(kube) {
  const r = await kube.request('GET', '/metrics', undefined, {
    headers: { accept: 'text/plain' },
  });
  if (r.status !== 200) throw new Error(`GET /metrics: ${r.status}`);
  const counts = Object.fromEntries(KINDS.map(([k]) => [k, 0]));
  for (const line of String(r.body).split('\n')) {
    const m =
      /^apiserver_flowcontrol_dispatched_requests_total\{([^}]*)\} (\S+)$/.exec(
        line,
      );
    const fs = m && /flow_schema="bench-plan-operator-([^"]+)"/.exec(m[1]);
    if (fs) counts[fs[1]] = (counts[fs[1]] ?? 0) + Number(m[2]);
  }
  return counts;
}

async function ok(r, what) {
  if (r.status >= 300 && r.status !== 409)
    throw new Error(`${what}: ${r.status} ${r.body?.message ?? ''}`);
  return r.body;
}

async function until(what, fn, { timeoutMs, intervalMs = 500 }) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const got = await fn();
    if (got) return got;
    if (Date.now() > deadline)
      throw new Error(`${what}: not after ${timeoutMs} ms`);
    await sleep(intervalMs);
  }
}

const isReady = n =>
  (n.status?.conditions ?? []).some(
    c => c.type === 'Ready' && c.status === 'True',
  );

/**
 * The ideal schedule of the steps' own durations, in plan order: waves of `maxParallel`
 * (a wave as long as its slowest step), and a list schedule (each step starts the moment
 * one of `maxParallel` slots is free), which is never longer.
 */
export function idealSchedules(durations, maxParallel) {
  let waves = 0;
  for (let i = 0; i < durations.length; i += maxParallel)
    waves += Math.max(...durations.slice(i, i + maxParallel));
  const slots = new Array(Math.min(maxParallel, durations.length)).fill(0);
  for (const d of durations) {
    slots.sort((a, b) => a - b);
    slots[0] += d;
  }
  return { waves, list: Math.max(...slots) };
}

/**
 * Runs one rolling plan and prints its figures. `bench`: `name` (its log directory),
 * `planName`, `title` (the figure's first words), `planBody` (intent and body of the plan), `verb`
 * (what the emulator must have received once per worker: reboot, upgrade), `stepText`
 * (what a step does besides its drain, for the steps line), and optionally `timing` (the
 * emulator's), `operatorArgs` (flags of the operator), `check(plan, nodes)` (throws when
 * the plan's outcome is wrong) and `lines(plan)` (more lines before the figure).
 */
export async function rollingPlanBench(ctx, flags, bench) {
  const PLAN = bench.planName;
  ctx.setTimeoutMinutes(flags.timeoutMinutes);
  const workerCount = flags.workers ?? (flags.quick ? 10 : 50);
  const maxParallel = flags.maxParallel;
  if (workerCount < 1 || workerCount > 150)
    throw new Error('--workers is 1 to 150 (machine addresses .100-.249)');
  const before = machine();
  const logs = runLogDir(bench.name);
  log(`logs in ${logs}`);

  const rack = await benchRack({
    rackDir: flags.rack,
    heartbeatSeconds: 300,
  });
  ctx.onCleanup(() => rack.stop());
  const kube = rack.kube;
  if (!rack.attached || flags.nodes || flags.pods) {
    await ensureScale(kube, {
      nodes: flags.nodes ?? (flags.quick ? 200 : 5000),
      pods: flags.pods ?? (flags.quick ? 2000 : 50000),
    });
  }
  const clusterNodes = await kube.countAll('/api/v1/nodes');
  const clusterPods = await kube.countAll('/api/v1/pods');
  log(`cluster: ${clusterNodes} nodes, ${clusterPods} pods`);

  // --- the workers: kwok Nodes with a Talos machine each -----------------------------
  const existingProvider = await kube.request(
    'GET',
    `${API}/powerproviders/default`,
  );
  if (
    existingProvider.status === 200 &&
    existingProvider.body.metadata?.labels?.[LABEL] !== 'true'
  )
    throw new Error(
      'this rack has a PowerProvider of its own; the bench brings one for its workers',
    );
  const workers = Array.from({ length: workerCount }, (_, i) => ({
    name: `plan-w-${String(i + 1).padStart(3, '0')}`,
    controlPlane: false,
    machine: { host: FIRST_HOST + i, uuid: randomUUID(), bmc: false },
  }));
  const names = workers.map(w => w.name);
  const cleanupWorkers = async () => {
    await kube.request('DELETE', `${API}/maintenanceplans/${PLAN}`);
    await kube.request(
      'DELETE',
      `${API}/nodemaintenances?labelSelector=${encodeURIComponent(
        `rackside.dev/plan=${PLAN}`,
      )}`,
    );
    await kube.request('DELETE', `${API}/powerproviders/default`);
    await kube.request('DELETE', `/api/v1/namespaces/${NS}/secrets/${SECRET}`);
    await kube.request('DELETE', `/api/v1/namespaces/${POD_NS}`);
    await kube.request(
      'DELETE',
      `/api/v1/nodes?labelSelector=${encodeURIComponent(`${LABEL}=true`)}`,
    );
  };
  await cleanupWorkers(); // what an earlier, interrupted run left
  await until(
    'earlier bench workers gone',
    async () =>
      (await kube.countAll('/api/v1/nodes', {
        labelSelector: `${LABEL}=true`,
      })) === 0 &&
      (await kube.request('GET', `/api/v1/namespaces/${POD_NS}`)).status ===
        404,
    { timeoutMs: 120_000, intervalMs: 1000 },
  );
  ctx.onCleanup(cleanupWorkers);
  const k8s = readVersions().KUBERNETES_VERSION;
  for (const w of workers) {
    const node = fixtureNode(w, rack.info.net, k8s);
    node.metadata.labels[LABEL] = 'true';
    await ok(
      await kube.request('POST', '/api/v1/nodes', node),
      `create ${w.name}`,
    );
  }
  await until(
    `${workerCount} workers Ready`,
    async () => {
      const { items } = await kube.listAll('/api/v1/nodes', {
        labelSelector: `${LABEL}=true`,
      });
      return items.filter(isReady).length === workerCount;
    },
    { timeoutMs: 300_000, intervalMs: 1000 },
  );
  await ok(
    await kube.request('POST', '/api/v1/namespaces', {
      apiVersion: 'v1',
      kind: 'Namespace',
      metadata: { name: POD_NS, labels: { [LABEL]: 'true' } },
    }),
    'create namespace',
  );
  const owner = await kube.post(
    `/api/v1/namespaces/${POD_NS}/replicationcontrollers`,
    {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'workers', namespace: POD_NS },
      spec: {
        replicas: workerCount * flags.podsPerWorker,
        selector: { app: 'bench-plan' },
        template: {
          metadata: { labels: { app: 'bench-plan' } },
          spec: {
            containers: [{ name: 'app', image: 'registry.invalid/bench:1' }],
          },
        },
      },
    },
  );
  for (const w of names)
    for (let i = 0; i < flags.podsPerWorker; i++) {
      const pod = boundPod({
        name: `${w}-${i}`,
        namespace: POD_NS,
        nodeName: w,
        owner,
        labels: { app: 'bench-plan', [LABEL]: 'true' },
      });
      delete pod.metadata.labels[SCALE_LABEL]; // not the scale fixture's: this bench removes them
      await ok(
        await kube.request('POST', `/api/v1/namespaces/${POD_NS}/pods`, pod),
        `create pod ${w}-${i}`,
      );
    }
  const podCount = workerCount * flags.podsPerWorker;
  await until(
    `${podCount} worker pods Running`,
    async () => {
      const { items } = await kube.listAll(`/api/v1/namespaces/${POD_NS}/pods`);
      return (
        items.filter(p => p.status?.phase === 'Running').length === podCount
      );
    },
    { timeoutMs: 300_000, intervalMs: 1000 },
  );
  log(`${workerCount} workers Ready with ${podCount} pods Running`);

  const talos = await startTalosEmulator({
    dir: path.join(logs, 'talosemu'),
    net: rack.info.net,
    fixture: { cluster: 'plant-a', nodes: workers },
    kubeconfig: rack.info.kubeconfig,
    timing: { rebootDownMs: flags.rebootDownMs, ...bench.timing },
    log,
  });
  ctx.onCleanup(() => talos.stop());
  await ok(
    await kube.request('POST', `/api/v1/namespaces/${NS}/secrets`, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: SECRET, namespace: NS, labels: { [LABEL]: 'true' } },
      stringData: {
        talosconfig: fs.readFileSync(talos.talosconfigs['plant-a'], 'utf8'),
      },
    }),
    'create the talosconfig Secret',
  );

  // --- FlowSchemas, the operator, its power channel ----------------------------------
  for (const f of flowSchemas()) {
    await kube.request('DELETE', `${FLOW}/${f.metadata.name}`);
    await kube.post(FLOW, f);
  }
  ctx.onCleanup(async () => {
    for (const f of flowSchemas())
      await kube.request('DELETE', `${FLOW}/${f.metadata.name}`);
  });
  const operator = await startOperatorProcess(rack.dir, {
    logFile: path.join(logs, 'operator.log'),
    from: flags.operator,
    args: bench.operatorArgs ?? [],
  });
  ctx.onCleanup(() => operator.stop());
  await ok(
    await kube.request('POST', `${API}/powerproviders`, {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'PowerProvider',
      metadata: { name: 'default', labels: { [LABEL]: 'true' } },
      spec: {
        type: 'talos',
        talos: { secretRef: { name: SECRET, key: 'talosconfig' } },
      },
    }),
    'create the PowerProvider',
  );
  await until(
    'the talos channel advertises reboot',
    async () =>
      (
        await kube.request('GET', `${API}/powerproviders/default`)
      ).body?.status?.reboot === true,
    { timeoutMs: 120_000 },
  );

  // --- the plan -----------------------------------------------------------------------
  const steps = new Map(); // node -> {startAt, endAt}
  let planDone;
  let planFailed;
  const nmList = await kube.request('GET', `${API}/nodemaintenances?limit=1`);
  const nmWatch = kube.watch(`${API}/nodemaintenances`, {
    resourceVersion: nmList.body.metadata.resourceVersion,
    query: { labelSelector: `rackside.dev/plan=${PLAN}` },
    onEvent(type, nm, at) {
      if (type === 'BOOKMARK') return;
      const node = nm.spec?.nodeName;
      if (!steps.has(node)) steps.set(node, { startAt: at });
      const phase = nm.status?.phase;
      if (['Refused', 'Failed'].includes(phase))
        planFailed ??= `${nm.metadata.name} ${phase}: ${nm.status?.message}`;
      if (phase === 'Complete' && !steps.get(node).endAt)
        steps.get(node).endAt = at;
    },
  });
  ctx.onCleanup(() => nmWatch.stop());
  const planList = await kube.request('GET', `${API}/maintenanceplans?limit=1`);
  const planWatch = kube.watch(`${API}/maintenanceplans`, {
    resourceVersion: planList.body.metadata.resourceVersion,
    query: { fieldSelector: `metadata.name=${PLAN}` },
    onEvent(type, plan, at) {
      const phase = plan.status?.phase;
      if (phase === 'Complete') planDone ??= { at, plan };
      if (['Failed', 'Cancelled'].includes(phase))
        planFailed ??= `plan ${phase}: ${plan.status?.message}`;
    },
  });
  ctx.onCleanup(() => planWatch.stop());
  const sentBefore = await talos.counts();
  await sleep(3000); // the operator's start-up requests are over before the count begins
  const load = loadSampler();
  const start = await dispatched(kube);
  const t0 = performance.timeOrigin + performance.now();
  await kube.post(`${API}/maintenanceplans`, {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: { name: PLAN },
    spec: {
      ...bench.planBody,
      nodes: names,
      maxParallel,
      reason: `bench: ${bench.title} of ${workerCount} workers`,
      requestedBy: kube.username, // the attribution policy holds it to the writer
      drain: { deleteEmptyDirData: true },
      // The figure is the scheduler against the steps' own durations: a step's node
      // counts as healthy as soon as it is back (by default the plan waits until it has
      // been Ready for 60 s, which no step's own duration includes).
      healthyReturn: { healthyForSeconds: 0 },
    },
  });
  log(`plan ${PLAN}: ${workerCount} workers, maxParallel ${maxParallel}`);
  await until(
    `plan ${PLAN} Complete`,
    async () => {
      if (planFailed) throw new Error(planFailed);
      return planDone;
    },
    { timeoutMs: flags.timeoutMinutes * 60_000, intervalMs: 50 },
  );
  const end = await dispatched(kube);
  const seen = load.stop();
  const wallMs = planDone.at - t0;

  // --- checks -------------------------------------------------------------------------
  if (Object.values(end).every(v => v === 0))
    throw new Error(
      'no request of the operator was counted: the FlowSchemas did not match',
    );
  const counts = await talos.counts();
  const byNode = Object.fromEntries(
    talos.machines.map(m => [m.nodeName, m.uuid]),
  );
  // What each machine was sent during the plan: the plan's verb once, nothing else.
  const sentOf = (n, verb) =>
    (counts[byNode[n]]?.[verb] ?? 0) - (sentBefore[byNode[n]]?.[verb] ?? 0);
  const wrong = names.filter(
    n =>
      sentOf(n, bench.verb) !== 1 ||
      (bench.verb !== 'reboot' && sentOf(n, 'reboot') !== 0),
  );
  if (wrong.length)
    throw new Error(
      `${bench.verb}s sent: ${wrong
        .map(n => `${n} ${sentOf(n, bench.verb)}`)
        .join(', ')} (want 1 each${
        bench.verb !== 'reboot' ? ', and no reboot' : ''
      })`,
    );
  const { items: nodesAfter } = await kube.listAll('/api/v1/nodes', {
    labelSelector: `${LABEL}=true`,
  });
  const notBack = nodesAfter.filter(n => !isReady(n) || n.spec.unschedulable);
  if (notBack.length)
    throw new Error(
      `not Ready and in service: ${notBack.map(n => n.metadata.name)}`,
    );
  const podsLeft = await kube.countAll(`/api/v1/namespaces/${POD_NS}/pods`);
  if (podsLeft !== 0)
    throw new Error(`${podsLeft} worker pods were not evicted`);
  const missing = names.filter(n => !steps.get(n)?.endAt);
  if (missing.length) throw new Error(`no Complete step seen for ${missing}`);
  bench.check?.(planDone.plan, nodesAfter);

  // --- figures ------------------------------------------------------------------------
  const planNodes = planDone.plan.status.nodes.map(n => n.name);
  const durations = planNodes.map(
    n => steps.get(n).endAt - steps.get(n).startAt,
  );
  const ideal = idealSchedules(durations, maxParallel);
  const ordered = [...steps.values()].sort((a, b) => a.startAt - b.startAt);
  const firstStart = ordered[0].startAt - t0;
  // A freed slot -> the next step's start: each start after the first maxParallel, from
  // the step end that made room for it.
  const ends = [...steps.values()].map(s => s.endAt).sort((a, b) => a - b);
  const handoffs = ordered
    .slice(maxParallel)
    .map((s, i) => s.startAt - ends[i]);
  let open = 0;
  let most = 0;
  for (const [at, d] of [...steps.values()]
    .flatMap(s => [
      [s.startAt, 1],
      [s.endAt, -1],
    ])
    .sort((a, b) => a[0] - b[0] || a[1] - b[1])) {
    open += d;
    most = Math.max(most, open);
  }
  const delta = k => end[k] - start[k];
  const readKinds = KINDS.map(([k]) => k).filter(k => k.startsWith('read'));
  const reads = readKinds.reduce((sum, k) => sum + delta(k), 0);
  console.log(
    `cluster: ${clusterNodes} nodes, ${clusterPods} pods (the plan's ${workerCount} workers with ${podCount} pods among them)`,
  );
  console.log(
    `steps: ${durations.length}, own duration p50 ${seconds(
      percentile(durations, 50),
    )}, min ${seconds(Math.min(...durations))}, max ${seconds(
      Math.max(...durations),
    )} (drain of ${flags.podsPerWorker} pods, ${bench.stepText(
      flags,
    )}, back Ready, returned); at most ${most} open at once`,
  );
  console.log(
    `plan create -> first step ${seconds(
      firstStart,
    )}; freed slot -> next step p50 ${seconds(
      percentile(handoffs, 50),
    )}, max ${seconds(
      Math.max(...handoffs),
    )}; last step Complete -> plan Complete ${seconds(
      planDone.at - ends[ends.length - 1],
    )}`,
  );
  console.log(
    `wall ${seconds(wallMs)}; ideal in waves of ${maxParallel} ${seconds(
      ideal.waves,
    )} (ratio ${(wallMs / ideal.waves).toFixed(
      3,
    )}); ideal as a list schedule ${seconds(ideal.list)} (ratio ${(
      wallMs / ideal.list
    ).toFixed(3)})`,
  );
  console.log(
    `operator requests during the plan: ${delta('watch')} watch, ${delta(
      'write',
    )} writes, ${delta('lease')} Lease, ${reads} reads (get/list: ${readKinds
      .map(k => `${k.replace(/^read-?/, '') || 'other'} ${delta(k)}`)
      .join(', ')}); since start-up: ${KINDS.map(
      ([k]) => `${k} ${end[k]}`,
    ).join(', ')}`,
  );
  for (const line of bench.lines?.(planDone.plan) ?? []) console.log(line);
  console.log(
    `machine: ${before.cores} cores, ${before.memoryGiB} GiB, ${describeLoad(
      seen,
    )}`,
  );
  console.log(
    `${
      bench.title
    } of ${workerCount} workers at maxParallel ${maxParallel} on ${clusterNodes} nodes: wall/ideal ${(
      wallMs / ideal.waves
    ).toFixed(3)} (goal <= 1.05; ${seconds(wallMs)} against ${seconds(
      ideal.waves,
    )}), ${reads} operator requests besides watches, writes and Lease renewals`,
  );
}
