#!/usr/bin/env node
// Keep-alive: TLS handshakes and time per request of the Kubernetes client the operator and
// the backend use (KubeHttp in plugins/servers-node) against the rack's apiserver, with the
// operator's ServiceAccount token, next to the way it sent requests before (client-node's
// new https.Agent per request, destroyed after it), in the same run; and client-node's own
// generated clients with and without shareKeepAliveAgents. N sequential GETs (Nodes, limit 1)
// per mode; the client counts `secureConnect` events. The last line is the figure.
//
//   node bench/kube-keepalive.mjs              # 500 requests per mode, on a rack of its own
//   node bench/kube-keepalive.mjs --rack DIR   # on a running rack
//   node bench/kube-keepalive.mjs --quick      # 50 requests per mode
import { execFileSync } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import {
  describeLoad,
  loadSampler,
  log,
  machine,
  parseFlags,
  ROOT,
  runBench,
} from './lib/common.mjs';
import { benchRack } from './lib/rack.mjs';

const require = createRequire(import.meta.url);
const NODE_TRANSFORM = require.resolve(
  '@backstage/cli/config/nodeTransform.cjs',
  {
    paths: [ROOT],
  },
);

const USAGE =
  'usage: node bench/kube-keepalive.mjs [--quick] [--rack DIR] [--requests N]';
const FLAGS = {
  quick: {
    type: 'boolean',
    default: false,
    help: 'smoke run: 50 requests per mode',
  },
  rack: {
    type: 'string',
    help: 'use this running rack instead of starting one',
  },
  requests: { type: 'number', help: 'sequential requests per mode (500)' },
  timeoutMinutes: {
    type: 'number',
    default: 10,
    help: 'give up after this long',
  },
};

runBench(
  'kube-keepalive',
  async ctx => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    ctx.setTimeoutMinutes(flags.timeoutMinutes);
    const requests = flags.requests ?? (flags.quick ? 50 : 500);
    const m = machine();
    log(`machine: ${m.cores} cores, ${m.memoryGiB} GiB, load ${m.load1}`);
    const rack = await benchRack({ rackDir: flags.rack });
    ctx.onCleanup(() => rack.stop());
    const load = loadSampler();
    const out = execFileSync(
      process.execPath,
      [
        '--require',
        NODE_TRANSFORM,
        path.join(ROOT, 'bench/lib/keepaliveWorker.cjs'),
        path.join(rack.dir, 'operator.kubeconfig'),
        String(requests),
      ],
      {
        cwd: path.join(ROOT, 'plugins/servers-node'),
        encoding: 'utf8',
        maxBuffer: 1 << 24,
      },
    );
    const results = JSON.parse(out.trim().split('\n').pop());
    log(`load: ${describeLoad(load.stop())}`);
    for (const r of results) {
      log(
        `${r.name}: ${r.requests} requests, ${r.handshakes} TLS handshakes (${r.sockets} sockets), ` +
          `${r.wallMs.toFixed(0)} ms, p50 ${r.p50Ms.toFixed(
            2,
          )} ms, p95 ${r.p95Ms.toFixed(2)} ms per request`,
      );
    }
    const [before, after] = results;
    // The figure, last and on stdout as every bench's (bench/quick.mjs reads it there).
    console.log(
      `kube-keepalive: KubeHttp ${before.handshakes} -> ${after.handshakes} TLS handshakes for ${requests} requests; ` +
        `p50 ${before.p50Ms.toFixed(2)} -> ${after.p50Ms.toFixed(2)} ms (${(
          before.p50Ms / after.p50Ms
        ).toFixed(1)}x)`,
    );
  },
  { timeoutMinutes: 10 },
);
