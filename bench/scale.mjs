#!/usr/bin/env node
// The scale fixture: a simulated rack grown to 5,000 kwok nodes (3 control plane) and
// 50,000 pods bound to them, created in concurrent batches, then torn down again.
// Prints how long each half took; the last line is the figure.
//
//   node bench/scale.mjs            # 5,000 nodes, 50,000 pods, then teardown
//   node bench/scale.mjs --quick    # 200 nodes, 2,000 pods (smoke)
//   node bench/scale.mjs --keep     # leave the grown rack up for the other benches (--rack DIR)
import {
  describeLoad,
  loadSampler,
  log,
  machine,
  parseFlags,
  runBench,
  seconds,
} from './lib/common.mjs';
import {
  benchRack,
  ensureScale,
  scaleCounts,
  teardownScale,
} from './lib/rack.mjs';

const USAGE =
  'usage: node bench/scale.mjs [--quick] [--keep] [--rack DIR] [--nodes N] [--pods N]';
const FLAGS = {
  quick: {
    type: 'boolean',
    default: false,
    help: 'smoke run: 200 nodes, 2,000 pods',
  },
  nodes: {
    type: 'number',
    help: 'nodes in the cluster, fixture included (5000)',
  },
  pods: { type: 'number', help: 'pods bound to the scale nodes (50000)' },
  concurrency: {
    type: 'number',
    default: 32,
    help: 'requests in flight while creating',
  },
  heartbeatSeconds: {
    type: 'number',
    default: 300,
    help: "kwok's node heartbeat period for a rack this bench starts",
  },
  keep: {
    type: 'boolean',
    default: false,
    help: 'keep the rack and the fixture; print its directory',
  },
  rack: {
    type: 'string',
    help: 'grow this running rack instead of starting one',
  },
  timeoutMinutes: {
    type: 'number',
    default: 40,
    help: 'give up after this long',
  },
};

runBench(
  'scale',
  async ctx => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    ctx.setTimeoutMinutes(flags.timeoutMinutes);
    const nodes = flags.nodes ?? (flags.quick ? 200 : 5000);
    const pods = flags.pods ?? (flags.quick ? 2000 : 50000);
    const before = machine();
    log(
      `machine: ${before.cores} cores, ${before.memoryGiB} GiB, load ${before.load1}`,
    );
    const t0 = Date.now();
    const rack = await benchRack({
      rackDir: flags.rack,
      keep: flags.keep,
      heartbeatSeconds: flags.heartbeatSeconds,
    });
    ctx.onCleanup(() => rack.stop());
    const rackMs = Date.now() - t0;
    const load = loadSampler();
    const t1 = Date.now();
    const { timings } = await ensureScale(rack.kube, {
      nodes,
      pods,
      concurrency: flags.concurrency,
    });
    const upMs = Date.now() - t1;
    const counts = await scaleCounts(rack.kube);
    log(`scale objects now: ${counts.nodes} nodes, ${counts.pods} pods`);
    let down;
    if (!flags.keep) {
      down = await teardownScale(rack.kube);
      const left = await scaleCounts(rack.kube);
      if (left.nodes || left.pods)
        throw new Error(`teardown left ${left.nodes} nodes, ${left.pods} pods`);
      log(
        `teardown: pods gone after ${seconds(
          down.podsGoneMs,
        )}, nodes and namespaces after ${seconds(down.allGoneMs)}`,
      );
    }
    const seen = load.stop();
    console.log(
      `rack start (control plane, 10 fixture nodes): ${seconds(rackMs)}`,
    );
    if (timings.nodesCreatedMs !== undefined)
      console.log(
        `nodes: ${timings.nodesCreated} created in ${seconds(
          timings.nodesCreatedMs,
        )} (${Math.round(
          timings.nodesCreated / (timings.nodesCreatedMs / 1000),
        )}/s), all Ready after ${seconds(timings.nodesReadyMs)}`,
      );
    if (timings.podsCreatedMs !== undefined)
      console.log(
        `pods: ${timings.podsCreated} created in ${seconds(
          timings.podsCreatedMs,
        )} (${Math.round(
          timings.podsCreated / (timings.podsCreatedMs / 1000),
        )}/s), all Running after ${seconds(timings.podsRunningMs)}`,
      );
    if (down)
      console.log(
        `teardown: pods gone in ${seconds(
          down.podsGoneMs,
        )}, everything in ${seconds(down.allGoneMs)}`,
      );
    console.log(
      `machine: ${before.cores} cores, ${before.memoryGiB} GiB, ${describeLoad(
        seen,
      )}`,
    );
    if (flags.keep) console.log(`rack kept: --rack ${rack.dir}`);
    console.log(
      `scale fixture: ${nodes} nodes + ${pods} pods up in ${seconds(upMs)}${
        down ? `, torn down in ${seconds(down.allGoneMs)}` : ''
      }`,
    );
  },
  { timeoutMinutes: 40 },
);
