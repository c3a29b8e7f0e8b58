// The client side of bench/kube-keepalive.mjs, in a process of its own (TypeScript through
// backstage-cli's node transform, as the operator and the backend run in the demo). Sends
// N sequential GETs (a list of one Node) to the apiserver in each mode and counts the TLS handshakes the client
// makes (`secureConnect` of every socket tls.connect opens). Prints one JSON line.
//   node --require <nodeTransform.cjs> bench/lib/keepaliveWorker.cjs <kubeconfig> <N>
const tls = require('node:tls');
const https = require('node:https');
const { performance } = require('node:perf_hooks');
const { KubeConfig, CoreV1Api } = require('@kubernetes/client-node');
const {
  KubeHttp,
} = require('../../plugins/servers-node/src/clients/kubeHttp.ts');
const {
  shareKeepAliveAgents,
} = require('../../plugins/servers-node/src/clients/agents.ts');

const [kubeconfigFile, countArg] = process.argv.slice(2);
const N = Number(countArg);
// The operator may list Nodes; one item keeps the answer small, so the connection is the cost.
const PATH = '/api/v1/nodes?limit=1';

let handshakes = 0;
let sockets = 0;
const connect = tls.connect;
tls.connect = function countingConnect(...args) {
  const socket = connect.apply(this, args);
  sockets++;
  socket.once('secureConnect', () => handshakes++);
  return socket;
};

function load() {
  const kc = new KubeConfig();
  kc.loadFromFile(kubeconfigFile);
  return kc;
}

/** What KubeHttp did before: client-node's agent for each request, destroyed after it. */
async function perRequestGet(kc) {
  const options = { method: 'GET', headers: { Accept: 'application/json' } };
  await kc.applyToHTTPSOptions(options);
  const url = new URL(kc.getCurrentCluster().server + PATH);
  try {
    await new Promise((resolve, reject) => {
      const req = https.request(url, options, res => {
        res.resume();
        res.on('end', () =>
          res.statusCode === 200
            ? resolve()
            : reject(new Error(`GET ${PATH}: ${res.statusCode}`)),
        );
      });
      req.on('error', reject);
      req.end();
    });
  } finally {
    options.agent.destroy();
  }
}

async function run(name, get) {
  const before = { handshakes, sockets };
  const times = [];
  const start = performance.now();
  for (let i = 0; i < N; i++) {
    const t = performance.now();
    await get();
    times.push(performance.now() - t);
  }
  const wall = performance.now() - start;
  times.sort((a, b) => a - b);
  const at = p =>
    times[Math.min(times.length - 1, Math.floor(p * times.length))];
  return {
    name,
    requests: N,
    handshakes: handshakes - before.handshakes,
    sockets: sockets - before.sockets,
    wallMs: wall,
    p50Ms: at(0.5),
    p95Ms: at(0.95),
  };
}

(async () => {
  const results = [];
  const kc = load();
  results.push(
    await run('per-request agent (before)', () => perRequestGet(kc)),
  );
  const http = new KubeHttp(load());
  results.push(
    await run('KubeHttp, shared keep-alive agent (after)', () =>
      http.request({
        method: 'GET',
        path: '/api/v1/nodes',
        query: { limit: 1 },
      }),
    ),
  );
  const plain = load().makeApiClient(CoreV1Api);
  results.push(
    await run('client-node makeApiClient (before)', () =>
      plain.listNode({ limit: 1 }),
    ),
  );
  const shared = shareKeepAliveAgents(load()).makeApiClient(CoreV1Api);
  results.push(
    await run('client-node makeApiClient, shareKeepAliveAgents (after)', () =>
      shared.listNode({ limit: 1 }),
    ),
  );
  process.stdout.write(`${JSON.stringify(results)}\n`);
  process.exit(0);
})().catch(error => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
