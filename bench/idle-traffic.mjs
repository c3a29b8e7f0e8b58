#!/usr/bin/env node
// Idle traffic: the apiserver requests the operator and the backend make while nothing
// happens, counted by the apiserver itself. Each identity (the operator's and the backend's
// ServiceAccount) gets FlowSchemas of its own (API Priority and Fairness, routed to the
// usual workload-low priority level), one for watches, one for Leases, one for the rest;
// `apiserver_flowcontrol_dispatched_requests_total` per FlowSchema before and after the
// idle window gives the count. The last line is the figure.
//
//   node bench/idle-traffic.mjs              # 5 idle minutes, on a rack of its own (plant-a's 10 nodes)
//   node bench/idle-traffic.mjs --rack DIR   # on a running rack (e.g. the scale fixture)
//   node bench/idle-traffic.mjs --quick      # 30 idle seconds (smoke)
import path from 'node:path';
import {
  describeLoad,
  loadSampler,
  log,
  machine,
  parseFlags,
  runBench,
  runLogDir,
  seconds,
  sleep,
} from './lib/common.mjs';
import { cpuSeconds, startBackend } from './lib/backend.mjs';
import { startOperatorProcess } from './lib/operator.mjs';
import { benchRack } from './lib/rack.mjs';

const USAGE =
  'usage: node bench/idle-traffic.mjs [--quick] [--rack DIR] [--idle-seconds S]';
const FLAGS = {
  quick: {
    type: 'boolean',
    default: false,
    help: 'smoke run: 30 idle seconds',
  },
  rack: {
    type: 'string',
    help: 'use this running rack instead of starting one',
  },
  idleSeconds: { type: 'number', help: 'length of the idle window (300)' },
  operator: {
    type: 'string',
    default: 'build',
    help: "run the operator's build (as the image does) or its source",
  },
  timeoutMinutes: {
    type: 'number',
    default: 20,
    help: 'give up after this long',
  },
};

const FLOW = '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas';
const IDENTITIES = {
  operator: { namespace: 'rackside-system', name: 'rackside-operator' },
  backend: { namespace: 'rackside-system', name: 'rackside-backstage' },
};
/** The FlowSchemas of one identity: [suffix, precedence, rules]. */
const KINDS = [
  [
    'watch',
    101,
    [
      {
        resourceRules: [
          {
            verbs: ['watch'],
            apiGroups: ['*'],
            resources: ['*'],
            clusterScope: true,
            namespaces: ['*'],
          },
        ],
      },
    ],
  ],
  [
    'leases',
    102,
    [
      {
        resourceRules: [
          {
            verbs: ['*'],
            apiGroups: ['coordination.k8s.io'],
            resources: ['leases'],
            clusterScope: true,
            namespaces: ['*'],
          },
        ],
      },
    ],
  ],
  [
    'other',
    103,
    [
      {
        resourceRules: [
          {
            verbs: ['*'],
            apiGroups: ['*'],
            resources: ['*'],
            clusterScope: true,
            namespaces: ['*'],
          },
        ],
        nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }],
      },
    ],
  ],
];

function flowSchemas() {
  const out = [];
  for (const [who, sa] of Object.entries(IDENTITIES))
    for (const [kind, precedence, rules] of KINDS)
      out.push({
        apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
        kind: 'FlowSchema',
        metadata: {
          name: `bench-${who}-${kind}`,
          labels: { 'bench.rackside.dev/idle': 'true' },
        },
        spec: {
          matchingPrecedence: precedence + (who === 'backend' ? 10 : 0),
          priorityLevelConfiguration: { name: 'workload-low' },
          distinguisherMethod: { type: 'ByUser' },
          rules: rules.map(r => ({
            subjects: [{ kind: 'ServiceAccount', serviceAccount: sa }],
            ...r,
          })),
        },
      });
  return out;
}

/** dispatched requests per bench FlowSchema, from the apiserver's /metrics. */
async function dispatched(kube) {
  const r = await kube.request('GET', '/metrics', undefined, {
    headers: { accept: 'text/plain' },
  });
  if (r.status !== 200) throw new Error(`GET /metrics: ${r.status}`);
  const counts = {};
  for (const line of String(r.body).split('\n')) {
    const m =
      /^apiserver_flowcontrol_dispatched_requests_total\{([^}]*)\} (\S+)$/.exec(
        line,
      );
    if (!m) continue;
    const fs = /flow_schema="(bench-[^"]+)"/.exec(m[1]);
    if (fs) counts[fs[1]] = (counts[fs[1]] ?? 0) + Number(m[2]);
  }
  return counts;
}

runBench(
  'idle-traffic',
  async ctx => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    ctx.setTimeoutMinutes(flags.timeoutMinutes);
    const idleSeconds = flags.idleSeconds ?? (flags.quick ? 30 : 300);
    const before = machine();
    const rack = await benchRack({ rackDir: flags.rack });
    ctx.onCleanup(() => rack.stop());
    const kube = rack.kube;
    const nodeCount = await kube.countAll('/api/v1/nodes');
    for (const fs of flowSchemas()) {
      await kube.request('DELETE', `${FLOW}/${fs.metadata.name}`);
      await kube.post(FLOW, fs);
    }
    ctx.onCleanup(async () => {
      for (const fs of flowSchemas())
        await kube.request('DELETE', `${FLOW}/${fs.metadata.name}`);
    });
    // The apiserver matches new requests against the FlowSchemas at once; give it a moment.
    await sleep(2000);

    const logs = runLogDir('idle-traffic');
    log(`logs in ${logs}`);
    const operator = await startOperatorProcess(rack.dir, {
      logFile: path.join(logs, 'operator.log'),
      from: flags.operator,
    });
    ctx.onCleanup(() => operator.stop());
    const backend = await startBackend(rack.dir, {
      logFile: path.join(logs, 'backend.log'),
    });
    ctx.onCleanup(() => backend.stop());
    // Until its start-up work is done (the catalog ingests the server entities and the
    // users and groups the policy reads), then until its caches hold every node. The
    // cluster summary, not the servers list: the list's own defects (bench/README.md) are
    // not what this bench measures.
    const pid = backend.pid();
    if (!pid) throw new Error('could not find the backend process');
    for (
      let quiet = 0, last = cpuSeconds(pid), t0 = Date.now();
      quiet < 5 && Date.now() - t0 < 300_000;

    ) {
      await sleep(2000);
      const now = cpuSeconds(pid);
      quiet = now - last < 0.4 ? quiet + 1 : 0;
      last = now;
    }
    const token = await backend.token();
    const url = `${backend.baseUrl}/api/servers/clusters`;
    for (let t0 = Date.now(); ; ) {
      const r = await fetch(url, {
        headers: { authorization: `Bearer ${token}` },
      });
      const summary = r.ok
        ? (await r.json()).items.find(c => c.name === 'plant-a')
        : undefined;
      if (summary?.available && summary.servers === nodeCount) break;
      if (Date.now() - t0 > 120_000)
        throw new Error(
          `the backend did not see the ${nodeCount} nodes in 120 s (${
            r.status
          } ${JSON.stringify(summary)})`,
        );
      await sleep(1000);
    }
    await sleep(10_000);

    const load = loadSampler();
    log(`idle for ${idleSeconds} s`);
    const start = await dispatched(kube);
    const t0 = Date.now();
    await sleep(idleSeconds * 1000);
    const end = await dispatched(kube);
    // Both still the processes that were started (a restart would re-list everything).
    cpuSeconds(pid);
    process.kill(operator.pid, 0);
    const window = Date.now() - t0;
    const seen = load.stop();
    const delta = name => (end[name] ?? 0) - (start[name] ?? 0);
    const rows = {};
    for (const who of Object.keys(IDENTITIES))
      rows[who] = Object.fromEntries(
        KINDS.map(([kind]) => [kind, delta(`bench-${who}-${kind}`)]),
      );
    // The FlowSchemas must have matched something, or the counts prove nothing.
    if (!Object.keys(end).some(k => k.startsWith('bench-operator')))
      throw new Error(
        'no request of the operator was counted: the FlowSchemas did not match',
      );
    if (!Object.keys(end).some(k => k.startsWith('bench-backend')))
      throw new Error(
        'no request of the backend was counted: the FlowSchemas did not match',
      );
    console.log(`cluster: ${nodeCount} nodes; idle window ${seconds(window)}`);
    for (const [who, r] of Object.entries(rows))
      console.log(
        `${who}: ${r.watch} watch requests (re-opened watches), ${r.leases} Lease requests, ${r.other} other requests`,
      );
    console.log(
      `since start-up: operator ${KINDS.map(
        ([k]) => `${k} ${end[`bench-operator-${k}`] ?? 0}`,
      ).join(', ')}; ` +
        `backend ${KINDS.map(
          ([k]) => `${k} ${end[`bench-backend-${k}`] ?? 0}`,
        ).join(', ')}`,
    );
    console.log(
      `machine: ${before.cores} cores, ${before.memoryGiB} GiB, ${describeLoad(
        seen,
      )}`,
    );
    const beyond =
      rows.operator.leases +
      rows.operator.other +
      rows.backend.leases +
      rows.backend.other;
    console.log(
      `idle traffic over ${seconds(
        window,
      )}: ${beyond} requests beyond watches ` +
        `(operator ${rows.operator.leases} Lease + ${
          rows.operator.other
        } other, backend ${rows.backend.leases} Lease + ${
          rows.backend.other
        } other; ${
          rows.operator.watch + rows.backend.watch
        } watch re-opens) (goal: none beyond open watches)`,
    );
  },
  { timeoutMinutes: 20 },
);
