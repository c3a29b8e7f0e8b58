#!/usr/bin/env node
// The plan pre-flight (issue 34, DESIGN section 15): what the backend asks the apiserver,
// and how long it takes, to pre-flight a plan of 500 servers in the scale fixture's
// cluster (5,000 nodes, 2 pods a node; grown first on a rack of its own, or --rack DIR),
// with the demo backend of bench/lib/backend.mjs (the guest signs in as
// user:default/guest of examples/org.yaml, a plant admin; app-config raises
// servers.plans.preflightsPerMinute so the bench's own requests are not refused).
//
// - `GET /api/servers/clusters/plant-a/plans/preflight?intent=drain&nodes=<names>`, one at
//   a time, N times at each plan size (50 and 500): its latency (p50, p95) and the
//   apiserver requests the backend made during each one.
// - Beside it, what today's code did before the batched read: the plan pre-flight asked
//   each node's own pre-flight (pods of the node, the PodDisruptionBudgets, the Node, the
//   claims of each of its pods' namespaces, every PersistentVolume, every
//   VirtualMachineInstance), all at once. The single pre-flight route
//   `GET .../servers/:node/preflight?action=drain` still reads exactly that, so the bench
//   sends it for each of the same 500 nodes at once (Promise.all, as the old code did)
//   and counts the requests and the wall time. Its wall time is an upper bound of the old
//   plan pre-flight's: each single request also pays its own permission check, audit
//   event and token.
//
// Requests are counted by the apiserver: FlowSchemas (API Priority and Fairness, routed to
// the usual workload-low priority level) of the backend's ServiceAccount per resource read
// (pods, nodes, claims, volumes, budgets, VirtualMachineInstances, the rest), writes and
// watches; `apiserver_flowcontrol_dispatched_requests_total` per FlowSchema from the
// apiserver's /metrics before and after each pre-flight (as bench/idle-traffic.mjs counts).
// Watches are left out of the figure (a watch the backend re-opens meanwhile is not the
// pre-flight's).
//
// The last line is the figure.
//
//   node bench/plan-preflight.mjs              # 5,000 nodes, 10,000 pods, plans of 50 and 500
//   node bench/plan-preflight.mjs --rack DIR   # on a running rack (grown as needed)
//   node bench/plan-preflight.mjs --quick      # 200 nodes, 400 pods, plans of 10 and 100 (smoke)
import fs from 'node:fs';
import path from 'node:path';
import {
  describeLoad,
  loadSampler,
  log,
  machine,
  ms,
  parseFlags,
  percentile,
  runBench,
  runLogDir,
  seconds,
  sleep,
  UsageError,
} from './lib/common.mjs';
import { cpuSeconds, startBackend } from './lib/backend.mjs';
import { formatCpuSummary, summariseCpuProfile } from './lib/cpuProfile.mjs';
import { inspectorOf, startCpuProfile } from './lib/inspector.mjs';
import {
  benchRack,
  CLUSTER,
  ensureScale,
  scaleNodeNames,
} from './lib/rack.mjs';

const USAGE =
  'usage: node bench/plan-preflight.mjs [--quick] [--rack DIR] [--nodes N] [--pods N] [--sizes A,B] [--runs N]';
const FLAGS = {
  quick: {
    type: 'boolean',
    default: false,
    help: 'smoke run: 200 nodes, 400 pods, plans of 10 and 100, 5 runs',
  },
  rack: {
    type: 'string',
    help: 'use this running rack instead of starting one (grown to --nodes/--pods as needed)',
  },
  nodes: {
    type: 'number',
    help: 'nodes in the cluster, fixture included (5000)',
  },
  pods: {
    type: 'number',
    help: 'scale pods, spread round-robin over the scale nodes (2 a node)',
  },
  sizes: {
    type: 'string',
    help: 'plan sizes, comma separated; the largest is the figure and gets the per-node comparison (50,500)',
  },
  runs: {
    type: 'number',
    help: 'timed plan pre-flights of the largest size (20); 5 of each smaller one',
  },
  user: {
    type: 'string',
    default: 'guest',
    help: 'the examples/org.yaml user the guest signs in as',
  },
  cpuProfile: {
    type: 'boolean',
    default: false,
    help: "profile the backend's CPU during the largest plan's runs (backend-plan.cpuprofile in the logs; its summary printed)",
  },
  keep: {
    type: 'boolean',
    default: false,
    help: 'keep the rack it starts and print its directory, for a rerun with --rack DIR',
  },
  settleMinutes: {
    type: 'number',
    default: 5,
    help: 'how long to wait, before measuring, for the backend to see every node and go quiet',
  },
  timeoutMinutes: {
    type: 'number',
    default: 60,
    help: 'give up after this long',
  },
};

const FLOW = '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas';
const LABEL = 'bench.rackside.dev/plan-preflight';
const BACKEND_SA = { namespace: 'rackside-system', name: 'rackside-backstage' };
/** Node's default --max-http-header-size: the request line and headers together. */
const NODE_MAX_HEADER_BYTES = 16 * 1024;

/**
 * The backend's FlowSchemas, most specific first: [kind, precedence, verbs, groups,
 * resources]. Reads split by resource; `write` takes every other verb.
 */
const KINDS = [
  ['watch', 71, ['watch'], ['*'], ['*']],
  ['pods', 72, ['get', 'list'], [''], ['pods']],
  ['nodes', 72, ['get', 'list'], [''], ['nodes']],
  ['claims', 72, ['get', 'list'], [''], ['persistentvolumeclaims']],
  ['volumes', 72, ['get', 'list'], [''], ['persistentvolumes']],
  ['budgets', 72, ['get', 'list'], ['policy'], ['poddisruptionbudgets']],
  ['vmis', 72, ['get', 'list'], ['kubevirt.io'], ['virtualmachineinstances']],
  ['read', 73, ['get', 'list'], ['*'], ['*']],
  ['write', 74, ['*'], ['*'], ['*']],
];
const READS = KINDS.map(([k]) => k).filter(k => k !== 'watch');

function flowSchemas() {
  return KINDS.map(([kind, precedence, verbs, apiGroups, resources]) => ({
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: {
      name: `bench-preflight-backend-${kind}`,
      labels: { [LABEL]: 'true' },
    },
    spec: {
      matchingPrecedence: precedence,
      priorityLevelConfiguration: { name: 'workload-low' },
      distinguisherMethod: { type: 'ByUser' },
      rules: [
        {
          subjects: [{ kind: 'ServiceAccount', serviceAccount: BACKEND_SA }],
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
          ...(kind === 'write'
            ? { nonResourceRules: [{ verbs: ['*'], nonResourceURLs: ['*'] }] }
            : {}),
        },
      ],
    },
  }));
}

/**
 * Requests of the backend per FlowSchema kind so far, from the apiserver's /metrics:
 * dispatched, and rejected (API Priority and Fairness answered 429: queues full).
 */
async function requestCounts(kube) {
  const r = await kube.request('GET', '/metrics', undefined, {
    headers: { accept: 'text/plain' },
  });
  if (r.status !== 200) throw new Error(`GET /metrics: ${r.status}`);
  const counts = Object.fromEntries(KINDS.map(([k]) => [k, 0]));
  counts.rejected = 0;
  for (const line of String(r.body).split('\n')) {
    const m =
      /^apiserver_flowcontrol_(dispatched|rejected)_requests_total\{([^}]*)\} (\S+)$/.exec(
        line,
      );
    const fs = m && /flow_schema="bench-preflight-backend-([^"]+)"/.exec(m[2]);
    if (!fs) continue;
    if (m[1] === 'rejected') counts.rejected += Number(m[3]);
    else counts[fs[1]] = (counts[fs[1]] ?? 0) + Number(m[3]);
  }
  return counts;
}

function delta(end, start) {
  const out = {};
  for (const k of Object.keys(end)) out[k] = end[k] - (start[k] ?? 0);
  out.reads = READS.filter(k => k !== 'write').reduce((s, k) => s + out[k], 0);
  out.total = READS.reduce((s, k) => s + out[k], 0);
  return out;
}

/** `pods 21, claims 1, ...`: the non-zero kinds of a count, watches apart. */
function describeCounts(c) {
  const parts = READS.filter(k => c[k]).map(k => `${k} ${c[k]}`);
  if (c.watch) parts.push(`(watch re-opens ${c.watch}, not counted)`);
  if (c.rejected) parts.push(`rejected by the apiserver (429) ${c.rejected}`);
  return parts.join(', ') || 'none';
}

function range(values) {
  const lo = Math.min(...values);
  const hi = Math.max(...values);
  return lo === hi ? String(lo) : `${lo}-${hi}`;
}

/** Waits until the backend's CPU use stays under 20 % for 10 s. */
async function settle(pid, timeoutMs) {
  const t0 = Date.now();
  let quiet = 0;
  let last = cpuSeconds(pid);
  while (Date.now() - t0 < timeoutMs) {
    await sleep(2000);
    const now = cpuSeconds(pid);
    quiet = now - last < 0.4 ? quiet + 1 : 0;
    last = now;
    if (quiet >= 5) return Date.now() - t0;
  }
  return undefined;
}

async function getJson(url, token) {
  const t0 = performance.now();
  const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const text = await r.text();
  const elapsed = performance.now() - t0;
  let body;
  try {
    body = JSON.parse(text);
  } catch {
    body = text;
  }
  return { status: r.status, body, ms: elapsed, bytes: text.length };
}

runBench(
  'plan-preflight',
  async ctx => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    ctx.setTimeoutMinutes(flags.timeoutMinutes);
    const nodes = flags.nodes ?? (flags.quick ? 200 : 5000);
    const pods = flags.pods ?? nodes * 2;
    const sizes = (flags.sizes ?? (flags.quick ? '10,100' : '50,500'))
      .split(',')
      .map(Number)
      .sort((a, b) => a - b);
    if (sizes.some(s => !Number.isInteger(s) || s < 1 || s > 500))
      throw new UsageError(
        `--sizes: whole numbers from 1 to 500 (a plan's most), got ${flags.sizes}`,
      );
    const largest = sizes[sizes.length - 1];
    if (largest > nodes - 10)
      throw new UsageError(
        `a plan of ${largest} needs as many scale nodes; --nodes ${nodes} has ${
          nodes - 10
        }`,
      );
    const runs = flags.runs ?? (flags.quick ? 5 : 20);
    const before = machine();
    const logs = runLogDir('plan-preflight');
    log(`logs in ${logs}`);

    const rack = await benchRack({
      rackDir: flags.rack,
      keep: flags.keep,
      heartbeatSeconds: 300,
    });
    ctx.onCleanup(() => rack.stop());
    const kube = rack.kube;
    await ensureScale(kube, { nodes, pods });
    const clusterNodes = await kube.countAll('/api/v1/nodes');
    const clusterPods = await kube.countAll('/api/v1/pods');
    log(`cluster: ${clusterNodes} nodes, ${clusterPods} pods`);

    for (const f of flowSchemas()) {
      await kube.request('DELETE', `${FLOW}/${f.metadata.name}`);
      await kube.post(FLOW, f);
    }
    ctx.onCleanup(async () => {
      for (const f of flowSchemas())
        await kube.request('DELETE', `${FLOW}/${f.metadata.name}`);
    });

    // The backend, with the plan pre-flight limit raised above what the bench asks.
    const extraConfig = path.join(logs, 'app-config.plan-preflight.yaml');
    fs.writeFileSync(
      extraConfig,
      [
        '# Written by bench/plan-preflight.mjs: the bench asks more plan pre-flights a',
        "# minute than a user's default limit (servers.plans.preflightsPerMinute, 20).",
        'servers:',
        '  plans:',
        '    preflightsPerMinute: 100000',
        '',
      ].join('\n'),
    );
    const backend = await startBackend(rack.dir, {
      user: flags.user,
      logFile: path.join(logs, 'backend.log'),
      configs: [extraConfig],
      // The pre-flight needs no page: the app is served as it is (or not at all).
      buildApp: false,
      env: flags.cpuProfile ? { NODE_OPTIONS: '--inspect=127.0.0.1:0' } : {},
    });
    ctx.onCleanup(() => backend.stop());
    const pid = backend.pid();
    if (!pid) throw new Error('could not find the backend process');
    const token = await backend.token();
    const api = `${backend.baseUrl}/api/servers/clusters`;
    const settleStart = Date.now();
    for (;;) {
      const r = await getJson(api, token);
      const summary =
        r.status === 200
          ? r.body.items.find(c => c.name === CLUSTER)
          : undefined;
      if (summary?.available && summary.servers === clusterNodes) break;
      if (Date.now() - settleStart > flags.settleMinutes * 60_000)
        throw new Error(
          `the backend did not see the ${clusterNodes} nodes in ${
            flags.settleMinutes
          } min (${r.status} ${JSON.stringify(summary)})`,
        );
      await sleep(1000);
    }
    const settledMs = await settle(
      pid,
      Math.max(
        60_000,
        flags.settleMinutes * 60_000 - (Date.now() - settleStart),
      ),
    );
    log(
      settledMs === undefined
        ? 'the backend did not go quiet; measuring anyway'
        : `the backend sees every node and is quiet after ${seconds(
            Date.now() - settleStart,
          )}`,
    );

    // The plan: scale nodes spread over the whole fixture (2 pods each by default).
    const scaleNames = scaleNodeNames(nodes);
    const stride = Math.floor(scaleNames.length / largest);
    const planNodes = Array.from(
      { length: largest },
      (_, i) => scaleNames[i * stride],
    );
    const planUrl = names =>
      `${api}/${CLUSTER}/plans/preflight?${new URLSearchParams({
        intent: 'drain',
        nodes: names.join(','),
      })}`;
    const requestLine = `GET ${new URL(planUrl(planNodes)).pathname}${
      new URL(planUrl(planNodes)).search
    } HTTP/1.1`;
    log(
      `a plan of ${largest}: request line ${requestLine.length} bytes (the backend's limit for the request line and headers: Node's default ${NODE_MAX_HEADER_BYTES})`,
    );

    const planPreflight = async names => {
      const r = await getJson(planUrl(names), token);
      if (r.status !== 200)
        throw new Error(
          `plan pre-flight of ${names.length}: ${r.status} ${JSON.stringify(
            r.body,
          ).slice(0, 500)}`,
        );
      const answered = r.body.nodes?.length ?? 0;
      if (answered !== names.length)
        throw new Error(
          `plan pre-flight of ${names.length}: ${answered} nodes in the answer`,
        );
      return r;
    };

    // Warm-up (not counted): the first request of each route compiles its code.
    for (const size of sizes) await planPreflight(planNodes.slice(0, size));
    {
      const r = await getJson(
        `${api}/${CLUSTER}/servers/${planNodes[0]}/preflight?action=drain`,
        token,
      );
      if (r.status !== 200)
        throw new Error(
          `pre-flight of ${planNodes[0]}: ${r.status} ${JSON.stringify(
            r.body,
          ).slice(0, 500)}`,
        );
    }
    await sleep(2000);

    const load = loadSampler();
    // --- the plan pre-flight, one at a time -------------------------------------------------
    const bySize = new Map();
    let sample;
    for (const size of sizes) {
      const names = planNodes.slice(0, size);
      const n = size === largest ? runs : Math.min(runs, 5);
      const latencies = [];
      const counts = [];
      let bytes = 0;
      const profiler =
        flags.cpuProfile && size === largest
          ? await startCpuProfile(
              await inspectorOf(backend.logFile, 'src/index'),
            )
          : undefined;
      const cpu0 = cpuSeconds(pid);
      for (let i = 0; i < n; i++) {
        const start = await requestCounts(kube);
        const r = await planPreflight(names);
        const end = await requestCounts(kube);
        latencies.push(r.ms);
        bytes = r.bytes;
        counts.push(delta(end, start));
        sample ??= r.body;
      }
      const cpu = (cpuSeconds(pid) - cpu0) / n;
      const profile =
        profiler &&
        formatCpuSummary(
          summariseCpuProfile(
            await profiler.stop(path.join(logs, 'backend-plan.cpuprofile')),
            { top: 15 },
          ),
        );
      bySize.set(size, { latencies, counts, cpu, profile, bytes });
      log(
        `plan of ${size}: ${n} runs, p50 ${ms(
          percentile(latencies, 50),
        )}, requests ${range(counts.map(c => c.total))}`,
      );
    }

    // For reference: the cluster-wide pod list alone, paged as the backend's client pages
    // it (500 a page, full objects), by the bench's own client; and the same pods in one
    // request from the apiserver's watch cache (resourceVersion=0, not paged).
    const podListMs = [];
    const podCacheListMs = [];
    let podPages = 0;
    for (let i = 0; i < 3; i++) {
      const t0 = performance.now();
      await kube.get('/api/v1/pods?resourceVersion=0');
      podCacheListMs.push(performance.now() - t0);
      const t = performance.now();
      let cont;
      podPages = 0;
      do {
        const page = await kube.get(
          `/api/v1/pods?${new URLSearchParams({
            limit: '500',
            ...(cont ? { continue: cont } : {}),
          })}`,
        );
        podPages++;
        cont = page.metadata?.continue;
      } while (cont);
      podListMs.push(performance.now() - t);
    }

    // --- today's code before the batch: each node's own pre-flight, all at once ---------
    const singleStart = await requestCounts(kube);
    const cpu0 = cpuSeconds(pid);
    const t0 = performance.now();
    const singles = await Promise.all(
      planNodes.map(node =>
        getJson(
          `${api}/${CLUSTER}/servers/${node}/preflight?action=drain`,
          token,
        )
          .then(r => ({ node, ...r }))
          .catch(error => ({ node, status: 0, body: String(error), ms: NaN })),
      ),
    );
    const singleWallMs = performance.now() - t0;
    const singleCpu = cpuSeconds(pid) - cpu0;
    const singleEnd = await requestCounts(kube);
    const seen = load.stop();
    const single = delta(singleEnd, singleStart);
    const singleFailed = singles.filter(r => r.status !== 200);
    if (singleFailed.length)
      log(
        `${singleFailed.length} of ${largest} single pre-flights failed, e.g. ${
          singleFailed[0].node
        }: ${singleFailed[0].status} ${JSON.stringify(
          singleFailed[0].body,
        ).slice(0, 300)}`,
      );

    // --- checks -------------------------------------------------------------------------
    const all = [...bySize.values()].flatMap(s => s.counts);
    if (all.every(c => c.total === 0) && single.total === 0)
      throw new Error(
        'no request of the backend was counted: the FlowSchemas did not match',
      );
    // The plan's answer agrees with each node's own pre-flight (what it evicts, refuses,
    // the ceremony it needs and whether it can proceed): the batch reads the same thing.
    const gist = i =>
      `${i.canProceed ? 'can proceed' : 'blocked'}, evict ${
        i.evict?.length
      }, refused ${i.refused?.length}, ${i.ceremony?.level}`;
    const planGist = new Map((sample?.nodes ?? []).map(n => [n.node, gist(n)]));
    const disagree = singles.filter(
      r =>
        r.status === 200 &&
        planGist.has(r.node) &&
        gist(r.body) !== planGist.get(r.node),
    );

    // --- figures ------------------------------------------------------------------------
    console.log(
      `cluster: ${clusterNodes} nodes, ${clusterPods} pods; plan of ${largest}: ${
        planNodes[0]
      }, ${planNodes[1]}, ... ${planNodes[largest - 1]} (${
        stride === 1 ? 'the first scale nodes' : `one scale node in ${stride}`
      }); request line ${
        requestLine.length
      } bytes (limit ${NODE_MAX_HEADER_BYTES})`,
    );
    for (const [size, s] of bySize) {
      const totals = s.counts.map(c => c.total);
      const kinds = Object.fromEntries(
        [...READS, 'watch', 'rejected'].map(k => [
          k,
          percentile(
            s.counts.map(c => c[k]),
            50,
          ),
        ]),
      );
      console.log(
        `plan pre-flight of ${size}: ${s.latencies.length} runs, p50 ${ms(
          percentile(s.latencies, 50),
        )}, p95 ${ms(percentile(s.latencies, 95))}, max ${ms(
          Math.max(...s.latencies),
        )}; answer ${(s.bytes / 1e3).toFixed(0)} kB; backend CPU ${ms(
          s.cpu * 1000,
        )} a request; apiserver requests ${range(
          totals,
        )} a pre-flight (p50 by kind: ${describeCounts(kinds)})`,
      );
    }
    console.log(
      `for reference, the cluster-wide pod list alone (the bench's client, ${podPages} page${
        podPages === 1 ? '' : 's'
      } of 500): p50 ${ms(
        percentile(podListMs, 50),
      )} of 3; in one request from the apiserver's watch cache (resourceVersion=0): p50 ${ms(
        percentile(podCacheListMs, 50),
      )} of 3`,
    );
    const singleOk = singles.filter(r => r.status === 200).map(r => r.ms);
    console.log(
      `per-node reads (today's code before the batch: each node's pre-flight, ${largest} at once): ${
        single.total
      } apiserver requests (${describeCounts(single)}); wall ${seconds(
        singleWallMs,
      )}; backend CPU ${seconds(singleCpu * 1000)}; ${
        singleOk.length
      }/${largest} answered 200${
        singleOk.length
          ? ` (each p50 ${ms(percentile(singleOk, 50))}, max ${ms(
              Math.max(...singleOk),
            )})`
          : ''
      }`,
    );
    console.log(
      `the plan's answer and the nodes' own pre-flights agree on ${
        singleOk.length - disagree.length
      } of ${singleOk.length} nodes (can proceed, evict, refused, ceremony)`,
    );
    if (disagree.length)
      console.log(
        `nodes where they differ between the plan pre-flight and the node's own: ${disagree
          .slice(0, 5)
          .map(
            r => `${r.node}: plan ${planGist.get(r.node)}; own ${gist(r.body)}`,
          )
          .join(', ')}${disagree.length > 5 ? ', ...' : ''}`,
      );
    console.log(
      `machine: ${before.cores} cores, ${before.memoryGiB} GiB, ${describeLoad(
        seen,
      )}`,
    );
    const profiled = bySize.get(largest).profile;
    if (profiled) {
      console.log(
        `backend CPU during the ${largest}-server pre-flights (${path.join(
          logs,
          'backend-plan.cpuprofile',
        )}):`,
      );
      console.log(profiled);
    }
    if (flags.keep && !rack.attached)
      console.log(`rack kept: --rack ${rack.dir}`);
    const big = bySize.get(largest);
    const constant = sizes
      .map(
        size =>
          `${range(bySize.get(size).counts.map(c => c.total))} at ${size}`,
      )
      .join(', ');
    const within = percentile(big.latencies, 95) <= 1000;
    console.log(
      `plan pre-flight of ${largest} servers at ${clusterNodes.toLocaleString(
        'en-US',
      )} nodes: ${range(
        big.counts.map(c => c.total),
      )} apiserver requests (${constant}; per-node reads: ${
        single.total
      } in ${seconds(singleWallMs)}), p95 ${ms(
        percentile(big.latencies, 95),
      )} (p50 ${ms(
        percentile(big.latencies, 50),
      )}); goal: constant in nodes, p95 <= 1 s${within ? '' : ' (p95 over)'}`,
    );
  },
  { timeoutMinutes: 60 },
);
