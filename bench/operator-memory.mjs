#!/usr/bin/env node
// Operator memory at scale: the RSS of the operator process (its own process, the demo's
// ServiceAccount, its build as the image runs it) on a cluster of 5,000 nodes and 50,000
// pods, while idle and during 50 concurrent drains, with where the RSS lives (smaps).
// Prints the kube-scheduler's and the controller manager's RSS next to it (both keep every
// node and pod in memory); the last line is the figure.
//
//   node bench/operator-memory.mjs --rack DIR   # on the scale fixture (bench/scale.mjs --keep)
//   node bench/operator-memory.mjs              # grows a rack of its own first (~10 min)
//   node bench/operator-memory.mjs --quick      # 200 nodes, 2,000 pods, 10 drains (smoke)
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  describeLoad,
  loadSampler,
  log,
  machine,
  mb,
  parseFlags,
  pool,
  runBench,
  runLogDir,
  seconds,
  sleep,
} from './lib/common.mjs';
import { formatHeapSummary, summariseHeap } from './lib/heapSummary.mjs';
import {
  describeBreakdown,
  memoryBreakdown,
  rssOf,
  startOperatorProcess,
} from './lib/operator.mjs';
import { benchRack, ensureScale, scaleNodeNames } from './lib/rack.mjs';

const USAGE =
  'usage: node bench/operator-memory.mjs [--quick] [--rack DIR] [--nodes N] [--pods N] [--drains N] [--idle-seconds S]';
const FLAGS = {
  quick: {
    type: 'boolean',
    default: false,
    help: 'smoke run: 200 nodes, 2,000 pods, 10 drains',
  },
  rack: {
    type: 'string',
    help: 'use this running rack (grown to --nodes/--pods if short)',
  },
  nodes: { type: 'number', help: 'nodes in the cluster (5000)' },
  pods: { type: 'number', help: 'scale pods (50000)' },
  drains: { type: 'number', help: 'concurrent drains (50)' },
  idleSeconds: {
    type: 'number',
    help: "idle time sampled before the drains (150: V8's memory reducer runs after ~100 s)",
  },
  heapSnapshot: {
    type: 'boolean',
    default: false,
    help: 'write a heap snapshot at the end of the idle time and summarise it',
  },
  goalMb: {
    type: 'number',
    default: 200,
    help: 'the goal, in MB (10^6 bytes)',
  },
  operator: {
    type: 'string',
    default: 'build',
    help: "run the operator's build (as the image does) or its source",
  },
  timeoutMinutes: {
    type: 'number',
    default: 40,
    help: 'give up after this long',
  },
};

const NM_PATH = '/apis/rackside.dev/v1alpha1/nodemaintenances';

/** Samples a process's RSS every `intervalMs`. */
function sampler(pid, intervalMs) {
  const samples = [];
  const take = () => {
    try {
      samples.push(rssOf(pid).rss);
    } catch {
      /* gone */
    }
  };
  take();
  const timer = setInterval(take, intervalMs);
  return {
    stop() {
      clearInterval(timer);
      take();
      return {
        last: samples.at(-1),
        max: Math.max(...samples),
        n: samples.length,
      };
    },
  };
}

/** Signals the operator to write a heap snapshot (into its cwd) and summarises it. */
async function heapSnapshot(operator) {
  const cwd = fs.readlinkSync(`/proc/${operator.pid}/cwd`);
  const before = new Set(fs.readdirSync(cwd));
  process.kill(operator.pid, 'SIGUSR2');
  for (let i = 0; i < 120; i++) {
    await sleep(1000);
    const file = fs
      .readdirSync(cwd)
      .find(f => f.endsWith('.heapsnapshot') && !before.has(f));
    if (file && fs.statSync(path.join(cwd, file)).size > 0) {
      await sleep(2000); // let the writer finish
      const kept = path.join(
        os.tmpdir(),
        `rackside-operator-${Date.now()}.heapsnapshot`,
      );
      fs.renameSync(path.join(cwd, file), kept);
      return `heap snapshot ${kept}:\n${formatHeapSummary(
        summariseHeap(kept, 15),
      )}`;
    }
  }
  return 'heap snapshot: none written in 120 s';
}

/** RSS of a rack process by its pid file (kube-scheduler, kube-controller-manager). */
function rackProcessRss(rackDir, name) {
  try {
    const pid = Number(
      fs
        .readFileSync(path.join(rackDir, 'pids', `${name}.pid`), 'utf8')
        .split(/\s+/)[0],
    );
    return rssOf(pid).rss;
  } catch {
    return NaN;
  }
}

runBench(
  'operator-memory',
  async ctx => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    ctx.setTimeoutMinutes(flags.timeoutMinutes);
    const nodes = flags.nodes ?? (flags.quick ? 200 : 5000);
    const pods = flags.pods ?? (flags.quick ? 2000 : 50000);
    const drains = flags.drains ?? (flags.quick ? 10 : 50);
    const idleSeconds = flags.idleSeconds ?? (flags.quick ? 10 : 150);
    const before = machine();
    const rack = await benchRack({
      rackDir: flags.rack,
      heartbeatSeconds: 300,
    });
    ctx.onCleanup(() => rack.stop());
    const kube = rack.kube;
    await ensureScale(kube, { nodes, pods });
    const nodeCount = await kube.countAll('/api/v1/nodes');
    const podCount = await kube.countAll('/api/v1/pods');
    const load = loadSampler();
    const logs = runLogDir('operator-memory');
    log(`logs in ${logs}`);
    const operator = await startOperatorProcess(rack.dir, {
      logFile: path.join(logs, 'operator.log'),
      from: flags.operator,
      nodeArgs: flags.heapSnapshot ? ['--heapsnapshot-signal=SIGUSR2'] : [],
    });
    ctx.onCleanup(() => operator.stop());
    const afterStart = operator.rss();
    log(
      `operator ready after ${seconds(operator.readyMs)}, RSS ${mb(
        afterStart.rss,
      )}; idle for ${idleSeconds} s`,
    );
    const idle = sampler(operator.pid, 1000);
    await sleep(idleSeconds * 1000);
    const idleRss = idle.stop();
    const idleBreakdown = memoryBreakdown(operator.pid);

    // 50 drains at once, on 50 scale nodes of ~10 pods each.
    const targets = scaleNodeNames(nodes).slice(0, drains);
    const names = targets.map(n => `bench-mem-${n}`);
    ctx.onCleanup(async () => {
      await pool(names, 8, n => kube.request('DELETE', `${NM_PATH}/${n}`));
      await pool(targets, 8, n =>
        kube.request(
          'PATCH',
          `/api/v1/nodes/${n}`,
          { spec: { unschedulable: null } },
          {
            contentType: 'application/merge-patch+json',
          },
        ),
      );
    });
    const during = sampler(operator.pid, 250);
    const t0 = Date.now();
    await pool(targets, drains, (node, i) =>
      kube.post(NM_PATH, {
        apiVersion: 'rackside.dev/v1alpha1',
        kind: 'NodeMaintenance',
        metadata: { name: names[i] },
        spec: {
          nodeName: node,
          intent: 'drain',
          reason: 'bench: concurrent drains',
          requestedBy: kube.username, // the attribution policy holds it to the writer
        },
      }),
    );
    let phases;
    for (;;) {
      const list = await kube.get(
        `${NM_PATH}?${new URLSearchParams({ limit: '500' })}`,
      );
      phases = new Map(
        list.items
          .filter(nm => names.includes(nm.metadata.name))
          .map(nm => [nm.metadata.name, nm.status?.phase]),
      );
      const bad = [...phases].filter(
        ([, p]) => p === 'Failed' || p === 'Refused',
      );
      if (bad.length)
        throw new Error(
          `drains ended ${bad.map(([n, p]) => `${n} ${p}`).join(', ')}`,
        );
      if (
        [...phases.values()].filter(p => p === 'Drained').length ===
        names.length
      )
        break;
      if (Date.now() - t0 > 600_000)
        throw new Error('the drains did not finish in 10 min');
      await sleep(500);
    }
    const drainMs = Date.now() - t0;
    const duringRss = during.stop();
    const drainBreakdown = memoryBreakdown(operator.pid);
    const peak = operator.rss().peak;
    // Last: writing a snapshot itself takes memory.
    const heap = flags.heapSnapshot ? await heapSnapshot(operator) : undefined;
    const seen = load.stop();
    const scheduler = rackProcessRss(rack.dir, 'kube-scheduler');
    const kcm = rackProcessRss(rack.dir, 'kube-controller-manager');

    // Put the evicted pods back and the nodes in service, so a kept rack stays the fixture.
    await pool(names, 8, n => kube.request('DELETE', `${NM_PATH}/${n}`));
    await pool(targets, 8, n =>
      kube.request(
        'PATCH',
        `/api/v1/nodes/${n}`,
        { spec: { unschedulable: null } },
        {
          contentType: 'application/merge-patch+json',
        },
      ),
    );
    if (rack.attached) await ensureScale(kube, { nodes, pods });

    const goal = flags.goalMb * 1e6;
    console.log(`cluster: ${nodeCount} nodes, ${podCount} pods`);
    console.log(
      `operator ready after ${seconds(operator.readyMs)}; RSS then ${mb(
        afterStart.rss,
      )}`,
    );
    console.log(
      `idle ${idleSeconds} s: RSS ${mb(idleRss.last)} (max ${mb(
        idleRss.max,
      )}): ${describeBreakdown(idleBreakdown)}`,
    );
    if (heap) console.log(heap);
    console.log(
      `${drains} concurrent drains (${drains} nodes, all Drained in ${seconds(
        drainMs,
      )}): RSS max ${mb(duringRss.max)}, after ${mb(
        duringRss.last,
      )}; peak RSS of the process (VmHWM) ${mb(peak)}: ${describeBreakdown(
        drainBreakdown,
      )}`,
    );
    console.log(
      `for comparison: kube-scheduler ${mb(
        scheduler,
      )}, kube-controller-manager ${mb(kcm)} (each caches every node and pod)`,
    );
    console.log(
      `machine: ${before.cores} cores, ${before.memoryGiB} GiB, ${describeLoad(
        seen,
      )}`,
    );
    const worst = Math.max(idleRss.max, duringRss.max);
    console.log(
      `operator (${
        flags.operator
      }) RSS at ${nodeCount} nodes / ${podCount} pods: idle ${mb(
        idleRss.last,
      )}, ` +
        `during ${drains} drains max ${mb(duringRss.max)} (goal <= ${
          flags.goalMb
        } MB: ${worst <= goal ? 'met' : 'missed'})`,
    );
  },
  { timeoutMinutes: 40 },
);
