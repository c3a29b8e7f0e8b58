#!/usr/bin/env node
// Drain of a node with 100 pods: the Rackside operator (a NodeMaintenance with intent
// drain) against `kubectl drain` of the same Kubernetes version, each on its own identical
// node, in the same run, with the same ServiceAccount (the operator's). Per run it prints
// both times, their ratio, and the time from the last pod gone (its DELETED event) to the
// NodeMaintenance's phase Drained; the last line gives medians, the ratio and the p95.
//
//   node bench/drain.mjs             # 20 runs on a rack of its own
//   node bench/drain.mjs --quick     # 2 runs (smoke)
//   node bench/drain.mjs --rack DIR  # on a running rack (e.g. the scale fixture, bench/scale.mjs --keep)
//
// The node's 100 pods: 96 bound to it and controlled by a ReplicationController (no
// controller acts on it here, so nothing replaces them): 48 vanish at once, 24 take 1 s,
// 16 take 2 s, 8 take 3 s to terminate (kwok honours their grace period). And 4 pods of a
// Deployment behind a PodDisruptionBudget with maxUnavailable 1: one eviction at a time,
// the next only once the replacement runs on the spare node.
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fixtureNode, readVersions } from '../e2e/rack/rack.mjs';
import {
  describeLoad,
  loadSampler,
  log,
  machine,
  ms,
  parseFlags,
  percentile,
  pool,
  runBench,
  runLogDir,
  seconds,
  sleep,
} from './lib/common.mjs';
import { startOperatorProcess } from './lib/operator.mjs';
import { benchRack, boundPod } from './lib/rack.mjs';

const USAGE = 'usage: node bench/drain.mjs [--quick] [--runs N] [--rack DIR]';
const FLAGS = {
  quick: { type: 'boolean', default: false, help: 'smoke run: 2 runs' },
  runs: {
    type: 'number',
    help: 'runs, each one operator drain and one kubectl drain (20)',
  },
  rack: {
    type: 'string',
    help: 'use this running rack instead of starting one',
  },
  operator: {
    type: 'string',
    default: 'build',
    help: "run the operator's build (as the image does) or its source",
  },
  timeoutMinutes: {
    type: 'number',
    default: 30,
    help: 'give up after this long',
  },
};

const DRAIN_LABEL = 'bench.rackside.dev/drain';
const POOL_LABEL = 'bench.rackside.dev/pool';
const HONOR = 'rack.rackside.dev/honor-grace-period';
/** [pods, grace seconds, honoured] of the 96 bound pods. */
const BOUND_MIX = [
  [48, 0, false],
  [24, 1, true],
  [16, 2, true],
  [8, 3, true],
];
const PDB_PODS = 4;
const PDB_GRACE = 2;
const DRAIN_TIMEOUT_MS = 300_000;

function benchNode(name, labels) {
  const node = fixtureNode({ name }, 0, readVersions().KUBERNETES_VERSION);
  Object.assign(node.metadata.labels, { [DRAIN_LABEL]: 'true' }, labels);
  return node;
}

async function until(what, fn, { timeoutMs = 120_000, intervalMs = 250 } = {}) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await fn();
    if (v) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await sleep(intervalMs);
  }
}

/** One drain node with its 100 pods and a spare node for the PDB's replacements. */
async function prepareNode(kube, node) {
  const ns = node;
  const spare = `${node}-spare`;
  for (const n of [
    benchNode(node, { [POOL_LABEL]: node }),
    benchNode(spare, {}),
  ])
    await kube.post('/api/v1/nodes', n);
  await kube.post('/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: ns, labels: { [DRAIN_LABEL]: 'true' } },
  });
  await until(`${node} Ready`, async () => {
    const n = await kube.get(`/api/v1/nodes/${node}`);
    return (n.status?.conditions ?? []).some(
      c => c.type === 'Ready' && c.status === 'True',
    );
  });
  const bound = BOUND_MIX.reduce((a, [n]) => a + n, 0);
  const rc = await kube.post(
    `/api/v1/namespaces/${ns}/replicationcontrollers`,
    {
      apiVersion: 'v1',
      kind: 'ReplicationController',
      metadata: { name: 'bound', namespace: ns },
      spec: {
        replicas: bound,
        selector: { app: 'bound' },
        template: {
          metadata: { labels: { app: 'bound' } },
          spec: {
            containers: [{ name: 'app', image: 'registry.invalid/bench:1' }],
          },
        },
      },
    },
  );
  const pods = [];
  for (const [count, grace, honoured] of BOUND_MIX)
    for (let i = 0; i < count; i++)
      pods.push(
        boundPod({
          name: `bound-g${grace}-${i}`,
          namespace: ns,
          nodeName: node,
          owner: rc,
          labels: { app: 'bound' },
          annotations: honoured ? { [HONOR]: 'true' } : {},
          terminationGracePeriodSeconds: grace,
        }),
      );
  await pool(pods, 16, pod => kube.post(`/api/v1/namespaces/${ns}/pods`, pod));
  await kube.post(`/apis/apps/v1/namespaces/${ns}/deployments`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'guarded', namespace: ns },
    spec: {
      replicas: PDB_PODS,
      selector: { matchLabels: { app: 'guarded' } },
      template: {
        metadata: {
          labels: { app: 'guarded' },
          annotations: { [HONOR]: 'true' },
        },
        spec: {
          nodeSelector: { [POOL_LABEL]: node },
          terminationGracePeriodSeconds: PDB_GRACE,
          enableServiceLinks: false,
          automountServiceAccountToken: false,
          containers: [{ name: 'app', image: 'registry.invalid/bench:1' }],
        },
      },
    },
  });
  await kube.post(`/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets`, {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: 'guarded', namespace: ns },
    spec: { maxUnavailable: 1, selector: { matchLabels: { app: 'guarded' } } },
  });
  await until(`100 pods Running on ${node}`, async () => {
    const list = await kube.get(
      `/api/v1/pods?${new URLSearchParams({
        fieldSelector: `spec.nodeName=${node}`,
      })}`,
    );
    return (
      list.items.length === bound + PDB_PODS &&
      list.items.every(p => p.status?.phase === 'Running')
    );
  });
  await until(`PDB of ${node} allows one disruption`, async () => {
    const pdb = await kube.get(
      `/apis/policy/v1/namespaces/${ns}/poddisruptionbudgets/guarded`,
    );
    return (
      pdb.status?.expectedPods === PDB_PODS &&
      pdb.status?.disruptionsAllowed === 1
    );
  });
  // Only now may replacements go elsewhere: to the spare.
  await kube.patch(`/api/v1/nodes/${spare}`, {
    metadata: { labels: { [POOL_LABEL]: node } },
  });
  return { node, spare, ns, pods: bound + PDB_PODS };
}

/** Follows the pods of one node: when each one's DELETED event arrived. */
async function watchNodePods(kube, node) {
  const list = await kube.get(
    `/api/v1/pods?${new URLSearchParams({
      fieldSelector: `spec.nodeName=${node}`,
    })}`,
  );
  const present = new Set(
    list.items.map(p => `${p.metadata.namespace}/${p.metadata.name}`),
  );
  let lastGoneAt = 0;
  const w = kube.watch('/api/v1/pods', {
    resourceVersion: list.metadata.resourceVersion,
    query: { fieldSelector: `spec.nodeName=${node}` },
    onEvent(type, obj, at) {
      const key = `${obj.metadata?.namespace}/${obj.metadata?.name}`;
      if (type === 'ADDED') present.add(key);
      if (type === 'DELETED') {
        present.delete(key);
        lastGoneAt = at;
      }
    },
  });
  return {
    left: () => present.size,
    lastGoneAt: () => lastGoneAt,
    stop: () => w.stop(),
  };
}

/** First time each NodeMaintenance was seen in each phase. */
function watchMaintenances(kube, resourceVersion) {
  const seen = new Map();
  const w = kube.watch('/apis/rackside.dev/v1alpha1/nodemaintenances', {
    resourceVersion,
    onEvent(type, obj, at) {
      const phase = obj.status?.phase;
      if (!phase) return;
      const key = `${obj.metadata.name}/${phase}`;
      if (!seen.has(key)) seen.set(key, { at, obj });
    },
  });
  return {
    phaseAt: (name, phase) => seen.get(`${name}/${phase}`),
    stop: () => w.stop(),
  };
}

async function drainWithOperator(kube, target, maintenances) {
  const name = `bench-${target.node}`;
  const pods = await watchNodePods(kube, target.node);
  try {
    const t0 = performance.timeOrigin + performance.now();
    await kube.post('/apis/rackside.dev/v1alpha1/nodemaintenances', {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'NodeMaintenance',
      metadata: { name },
      spec: {
        nodeName: target.node,
        intent: 'drain',
        reason: 'bench: drain of 100 pods',
        requestedBy: kube.username, // the attribution policy holds it to the writer
      },
    });
    const done = await until(
      `${name} Drained`,
      async () => {
        for (const phase of ['Refused', 'Failed'])
          if (maintenances.phaseAt(name, phase))
            throw new Error(
              `${name} ended ${phase}: ${JSON.stringify(
                maintenances.phaseAt(name, phase).obj.status,
              )}`,
            );
        return maintenances.phaseAt(name, 'Drained');
      },
      { timeoutMs: DRAIN_TIMEOUT_MS, intervalMs: 20 },
    );
    if (pods.left() !== 0)
      throw new Error(
        `${name} Drained with ${pods.left()} pods left on ${target.node}`,
      );
    if (done.obj.status?.drain?.total !== target.pods)
      throw new Error(
        `${name}: drain total ${done.obj.status?.drain?.total}, want ${target.pods}`,
      );
    return {
      totalMs: done.at - t0,
      lastGoneToDoneMs: done.at - pods.lastGoneAt(),
    };
  } finally {
    pods.stop();
  }
}

async function drainWithKubectl(info, rackDir, target, logFile) {
  const pods = await watchNodePods(info.kube, target.node);
  try {
    const out = fs.openSync(logFile, 'a');
    const t0 = performance.timeOrigin + performance.now();
    const child = spawn(
      info.kubectl,
      [
        '--kubeconfig',
        path.join(rackDir, 'operator.kubeconfig'),
        'drain',
        target.node,
        '--grace-period=-1',
        `--timeout=${DRAIN_TIMEOUT_MS / 1000}s`,
      ],
      { stdio: ['ignore', out, out] },
    );
    fs.closeSync(out);
    const code = await new Promise(r => child.on('exit', r));
    const t1 = performance.timeOrigin + performance.now();
    if (code !== 0)
      throw new Error(
        `kubectl drain ${target.node} exited ${code}; see ${logFile}`,
      );
    if (pods.left() !== 0)
      throw new Error(`kubectl drain ${target.node} left ${pods.left()} pods`);
    return { totalMs: t1 - t0, lastGoneToDoneMs: t1 - pods.lastGoneAt() };
  } finally {
    pods.stop();
  }
}

async function cleanup(kube, targets) {
  for (const t of targets) {
    await kube.request(
      'DELETE',
      `/apis/rackside.dev/v1alpha1/nodemaintenances/bench-${t.node}`,
    );
    await kube.request('DELETE', `/api/v1/namespaces/${t.ns}`);
  }
  await until(
    'bench namespaces gone',
    async () => {
      for (const t of targets)
        if (
          (await kube.request('GET', `/api/v1/namespaces/${t.ns}`)).status !==
          404
        )
          return false;
      return true;
    },
    { timeoutMs: 120_000, intervalMs: 500 },
  );
  for (const t of targets)
    for (const n of [t.node, t.spare])
      await kube.request('DELETE', `/api/v1/nodes/${n}`);
}

runBench(
  'drain',
  async ctx => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    ctx.setTimeoutMinutes(flags.timeoutMinutes);
    const runs = flags.runs ?? (flags.quick ? 2 : 20);
    const before = machine();
    const rack = await benchRack({ rackDir: flags.rack });
    ctx.onCleanup(() => rack.stop());
    const kube = rack.kube;
    const nodeCount = await kube.countAll('/api/v1/nodes');
    const logs = runLogDir('drain');
    log(`logs in ${logs}`);
    const operator = await startOperatorProcess(rack.dir, {
      logFile: path.join(logs, 'operator.log'),
      from: flags.operator,
    });
    ctx.onCleanup(() => operator.stop());
    const kubectlLog = path.join(logs, 'kubectl-drain.log');
    const nmList = await kube.get(
      '/apis/rackside.dev/v1alpha1/nodemaintenances',
    );
    const maintenances = watchMaintenances(
      kube,
      nmList.metadata.resourceVersion,
    );
    ctx.onCleanup(() => maintenances.stop());
    const load = loadSampler();
    const results = [];
    // The nodes and namespaces of a run that did not finish, removed on the way out.
    const pending = new Set();
    ctx.onCleanup(() => cleanup(kube, [...pending]));
    log(
      `${runs} runs on a cluster of ${nodeCount} nodes; kubectl ${
        readVersions().KUBERNETES_VERSION
      }`,
    );
    for (let run = 1; run <= runs; run++) {
      const stamp = `${Date.now().toString(36)}`;
      const [opTarget, kcTarget] = await Promise.all([
        prepareNode(kube, `drain-${stamp}-op`),
        prepareNode(kube, `drain-${stamp}-kc`),
      ]);
      pending.add(opTarget).add(kcTarget);
      // Alternate who goes first, so neither always drains on a fresher apiserver.
      const order = run % 2 ? ['operator', 'kubectl'] : ['kubectl', 'operator'];
      const r = { run };
      for (const who of order) {
        r[who] =
          who === 'operator'
            ? await drainWithOperator(kube, opTarget, maintenances)
            : await drainWithKubectl(
                { kube, kubectl: rack.info.kubectl },
                rack.dir,
                kcTarget,
                kubectlLog,
              );
      }
      results.push(r);
      console.log(
        `run ${run}: operator ${seconds(
          r.operator.totalMs,
        )} (last pod gone -> Drained ${ms(
          r.operator.lastGoneToDoneMs,
        )}), kubectl drain ${seconds(
          r.kubectl.totalMs,
        )} (last pod gone -> exit ${ms(r.kubectl.lastGoneToDoneMs)}), ratio ${(
          r.operator.totalMs / r.kubectl.totalMs
        ).toFixed(2)}`,
      );
      await cleanup(kube, [opTarget, kcTarget]);
      pending.delete(opTarget);
      pending.delete(kcTarget);
    }
    const seen = load.stop();
    const op = results.map(r => r.operator.totalMs);
    const kc = results.map(r => r.kubectl.totalMs);
    const lag = results.map(r => r.operator.lastGoneToDoneMs);
    const kcLag = results.map(r => r.kubectl.lastGoneToDoneMs);
    const ratio = percentile(op, 50) / percentile(kc, 50);
    console.log(
      `operator drain: p50 ${seconds(percentile(op, 50))}, p95 ${seconds(
        percentile(op, 95),
      )}; ` +
        `kubectl drain: p50 ${seconds(percentile(kc, 50))}, p95 ${seconds(
          percentile(kc, 95),
        )}`,
    );
    console.log(
      `last pod gone -> Drained: p50 ${ms(percentile(lag, 50))}, p95 ${ms(
        percentile(lag, 95),
      )}, max ${ms(Math.max(...lag))}; last pod gone -> kubectl exit: p50 ${ms(
        percentile(kcLag, 50),
      )}`,
    );
    console.log(
      `machine: ${before.cores} cores, ${before.memoryGiB} GiB, ${describeLoad(
        seen,
      )}; cluster of ${nodeCount} nodes`,
    );
    console.log(
      `drain of 100 pods, ${runs} runs: operator/kubectl = ${ratio.toFixed(
        2,
      )} (goal <= 1.0); ` +
        `last pod gone -> Drained p95 ${ms(
          percentile(lag, 95),
        )} (goal <= 100 ms)`,
    );
  },
  { timeoutMinutes: 30 },
);
