// The benchmarks' rack: a simulated rack of its own (e2e/rack, no Talos, no Redfish, no
// workloads) with Rackside's CRDs and identities, or an already running one (--rack DIR),
// plus the scale fixture: thousands of kwok Nodes and tens of thousands of Pods bound to
// them, created in batches and torn down with delete-collection calls.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fixtureNode, readVersions, startRack } from '../../e2e/rack/rack.mjs';
import { claimNetIn } from '../../e2e/rack/lib/net.mjs';
import { log, pool, ROOT, sleep } from './common.mjs';
import { adminKube } from './kube.mjs';

/** Label on every object the scale fixture creates (teardown selects by it). */
export const SCALE_LABEL = 'bench.rackside.dev/scale';
export const CLUSTER = 'plant-a';
const FIXTURE_NODES = 10; // e2e/rack/fixture/plant-a.yaml: 3 control plane, 6 workers, 1 virtual

/**
 * A rack network number no other live process holds: the same lock files as
 * packages/rack-testing (`~/.cache/rackside/nets/<n>.lock`), from 120 to 149 (the
 * benches' share of the plan in e2e/rack/lib/net.mjs).
 */
function claimNet() {
  return claimNetIn(120, 149);
}

/**
 * A rack for a benchmark. With `rackDir` it attaches to that running rack (started by
 * `bench/scale.mjs --keep`, say) and leaves it running; otherwise it starts one in a
 * fresh directory, installs the CRDs and the operator's and backend's ServiceAccounts
 * (scripts/demo-access.mjs), and `stop()` stops it unless `keep`.
 */
export async function benchRack({
  rackDir,
  keep = false,
  heartbeatSeconds,
} = {}) {
  if (rackDir) {
    const dir = path.resolve(rackDir);
    const file = path.join(dir, 'rack.json');
    if (!fs.existsSync(file))
      throw new Error(`no rack in ${dir} (rack.json missing)`);
    const info = JSON.parse(fs.readFileSync(file, 'utf8'));
    if (info.state !== 'ready')
      throw new Error(`the rack in ${dir} is ${info.state}`);
    const kube = adminKube(info);
    if ((await kube.request('GET', '/readyz')).status !== 200)
      throw new Error(`the rack in ${dir} does not answer`);
    ensureAccess(dir);
    log(`using the running rack in ${dir}`);
    return {
      info,
      dir,
      kube,
      attached: true,
      async stop() {
        kube.close();
      },
    };
  }
  const lease = claimNet();
  const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-bench-'));
  const dir = path.join(workDir, 'rack');
  let rack;
  try {
    rack = await startRack({
      dir,
      net: lease.net,
      withTalos: false,
      withRedfish: false,
      withWorkloads: false,
      nodeHeartbeatSeconds: heartbeatSeconds,
      // Detached: with --keep the rack outlives this process (`rack.mjs down --dir`).
      detached: keep,
      log: message => log(`rack: ${message}`),
    });
    ensureAccess(dir);
  } catch (error) {
    await rack?.stop();
    lease.release();
    throw error;
  }
  const info = JSON.parse(fs.readFileSync(path.join(dir, 'rack.json'), 'utf8'));
  const kube = adminKube(info);
  return {
    info,
    dir,
    kube,
    attached: false,
    async stop() {
      kube.close();
      if (keep) {
        log(
          `rack kept in ${dir}; stop it with: node e2e/rack/rack.mjs down --dir ${dir}`,
        );
        return;
      }
      await rack.stop();
      lease.release();
      fs.rmSync(workDir, { recursive: true, force: true });
    },
  };
}

/**
 * CRDs, the operator's and the backend's ServiceAccounts and roles, operator.kubeconfig,
 * backstage.token and app-config.bench.yaml, as the demo sets them up. Run on every
 * start (it is idempotent), so a kept rack gets the current CRDs and roles.
 */
function ensureAccess(dir) {
  execFileSync(
    process.execPath,
    [
      path.join(ROOT, 'scripts/demo-access.mjs'),
      dir,
      path.join(dir, 'app-config.bench.yaml'),
    ],
    { stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

// ---------------------------------------------------------------------------------------------
// The scale fixture

/** Names of the scale nodes for a rack of `total` nodes (the fixture brings 10). */
export function scaleNodeNames(total) {
  const count = Math.max(0, total - FIXTURE_NODES);
  const width = String(count).length;
  return Array.from(
    { length: count },
    (_, i) => `scale-${String(i + 1).padStart(Math.max(4, width), '0')}`,
  );
}

function scaleNode(name) {
  const node = fixtureNode(
    { name, controlPlane: false },
    0,
    readVersions().KUBERNETES_VERSION,
  );
  node.metadata.labels[SCALE_LABEL] = 'true';
  return node;
}

/** Creates nodes that do not exist yet; returns how many it created. */
export async function createNodes(kube, names, { concurrency = 32 } = {}) {
  let created = 0;
  await pool(names, concurrency, async name => {
    const r = await kube.request('POST', '/api/v1/nodes', scaleNode(name));
    if (r.status === 409) return;
    if (r.status >= 300)
      throw new Error(`create node ${name}: ${r.status} ${r.body?.message}`);
    created++;
  });
  return created;
}

/** Waits until every node named is Ready (kwok's node-initialize stage). */
export async function waitNodesReady(
  kube,
  names,
  { timeoutMs = 600_000 } = {},
) {
  const want = new Set(names);
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const { items } = await kube.listAll('/api/v1/nodes', {
      labelSelector: `${SCALE_LABEL}=true`,
    });
    const ready = items.filter(
      n =>
        want.has(n.metadata.name) &&
        (n.status?.conditions ?? []).some(
          c => c.type === 'Ready' && c.status === 'True',
        ),
    ).length;
    if (ready >= want.size) return;
    if (Date.now() > deadline)
      throw new Error(
        `only ${ready} of ${want.size} nodes Ready after ${timeoutMs} ms`,
      );
    await sleep(2000);
  }
}

/**
 * The owner the scale pods name as their controller: a ReplicationController. The rack's
 * controller manager runs no replicationcontroller controller, so it neither adds nor
 * removes pods, yet the pods count as managed for `kubectl drain` and for the operator.
 */
async function ensureOwner(kube, namespace, replicas) {
  const ns = await kube.request('POST', '/api/v1/namespaces', {
    apiVersion: 'v1',
    kind: 'Namespace',
    metadata: { name: namespace, labels: { [SCALE_LABEL]: 'true' } },
  });
  if (ns.status >= 300 && ns.status !== 409)
    throw new Error(`create namespace ${namespace}: ${ns.status}`);
  const rcPath = `/api/v1/namespaces/${namespace}/replicationcontrollers`;
  const existing = await kube.request('GET', `${rcPath}/scale`);
  if (existing.status === 200) return existing.body;
  return kube.post(rcPath, {
    apiVersion: 'v1',
    kind: 'ReplicationController',
    metadata: { name: 'scale', namespace, labels: { [SCALE_LABEL]: 'true' } },
    spec: {
      replicas,
      selector: { app: 'scale' },
      template: {
        metadata: { labels: { app: 'scale' } },
        spec: {
          containers: [{ name: 'app', image: 'registry.invalid/bench:1' }],
        },
      },
    },
  });
}

/** A pod bound to `nodeName`, controlled by `owner`. */
export function boundPod({
  name,
  namespace,
  nodeName,
  owner,
  labels = {},
  annotations = {},
  terminationGracePeriodSeconds = 0,
}) {
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace,
      labels: { [SCALE_LABEL]: 'true', ...labels },
      annotations,
      ownerReferences: owner
        ? [
            {
              apiVersion: owner.apiVersion ?? 'v1',
              kind: owner.kind,
              name: owner.metadata.name,
              uid: owner.metadata.uid,
              controller: true,
              blockOwnerDeletion: false,
            },
          ]
        : undefined,
    },
    spec: {
      nodeName,
      terminationGracePeriodSeconds,
      enableServiceLinks: false,
      automountServiceAccountToken: false,
      containers: [{ name: 'app', image: 'registry.invalid/bench:1' }],
    },
  };
}

/**
 * Creates `count` pods spread round-robin over `nodeNames`, in `namespaces` namespaces
 * (`scale-00`...), each controlled by its namespace's ReplicationController.
 */
export async function createPods(
  kube,
  { count, nodeNames, namespaces = 10, concurrency = 32, onProgress },
) {
  const perNs = Math.ceil(count / namespaces);
  const owners = [];
  for (let i = 0; i < namespaces; i++) {
    const ns = `scale-${String(i).padStart(2, '0')}`;
    owners.push(
      await ensureOwner(kube, ns, Math.min(perNs, count - i * perNs)),
    );
  }
  // Only the missing ones: a kept rack that lost pods to drains gets just those back.
  const existing = new Set();
  for (const owner of owners) {
    const { items } = await kube.listAll(
      `/api/v1/namespaces/${owner.metadata.namespace}/pods`,
      { labelSelector: `${SCALE_LABEL}=true` },
      { metadataOnly: true },
    );
    for (const p of items)
      existing.add(`${p.metadata.namespace}/${p.metadata.name}`);
  }
  const indexes = Array.from({ length: count }, (_, i) => i).filter(
    i =>
      !existing.has(
        `${owners[Math.floor(i / perNs)].metadata.namespace}/scale-${String(
          i,
        ).padStart(5, '0')}`,
      ),
  );
  let created = 0;
  await pool(indexes, concurrency, async i => {
    const owner = owners[Math.floor(i / perNs)];
    const namespace = owner.metadata.namespace;
    const pod = boundPod({
      name: `scale-${String(i).padStart(5, '0')}`,
      namespace,
      nodeName: nodeNames[i % nodeNames.length],
      owner,
      labels: { app: 'scale' },
    });
    const r = await kube.request(
      'POST',
      `/api/v1/namespaces/${namespace}/pods`,
      pod,
    );
    if (r.status >= 300 && r.status !== 409)
      throw new Error(
        `create pod ${pod.metadata.name}: ${r.status} ${r.body?.message}`,
      );
    created++;
    if (onProgress && created % 5000 === 0) onProgress(created);
  });
  return created;
}

/** Waits until `count` scale pods exist and none is short of Running (kwok's pod-ready). */
export async function waitPodsRunning(
  kube,
  count,
  { timeoutMs = 900_000 } = {},
) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const notRunning = await kube.get(
      `/api/v1/pods?${new URLSearchParams({
        labelSelector: `${SCALE_LABEL}=true`,
        fieldSelector: 'status.phase!=Running',
        limit: '1',
      })}`,
    );
    if (
      notRunning.items.length === 0 &&
      (await kube.countAll('/api/v1/pods', {
        labelSelector: `${SCALE_LABEL}=true`,
      })) >= count
    )
      return;
    if (Date.now() > deadline)
      throw new Error(`scale pods not all Running after ${timeoutMs} ms`);
    await sleep(3000);
  }
}

/** How many scale nodes and pods exist now. */
export async function scaleCounts(kube) {
  const query = { labelSelector: `${SCALE_LABEL}=true` };
  return {
    nodes: await kube.countAll('/api/v1/nodes', query),
    pods: await kube.countAll('/api/v1/pods', query),
  };
}

/**
 * Brings a rack to `nodes` nodes (3 control plane) and `pods` scale pods. Creates only
 * what is missing, so it can top up a rack kept from an earlier run.
 */
export async function ensureScale(kube, { nodes, pods, concurrency = 32 }) {
  const names = scaleNodeNames(nodes);
  const have = await scaleCounts(kube);
  const timings = {};
  if (have.nodes < names.length) {
    let t = Date.now();
    const created = await createNodes(kube, names, { concurrency });
    timings.nodesCreatedMs = Date.now() - t;
    timings.nodesCreated = created;
    log(
      `${created} nodes created in ${(timings.nodesCreatedMs / 1000).toFixed(
        1,
      )} s`,
    );
    await waitNodesReady(kube, names);
    timings.nodesReadyMs = Date.now() - t;
    log(
      `all ${names.length} scale nodes Ready after ${(
        timings.nodesReadyMs / 1000
      ).toFixed(1)} s`,
    );
  }
  if (have.pods < pods && names.length > 0) {
    const t = Date.now();
    const created = await createPods(kube, {
      count: pods,
      nodeNames: names,
      concurrency,
      onProgress: n => log(`${n} pods created`),
    });
    timings.podsCreatedMs = Date.now() - t;
    timings.podsCreated = created;
    log(
      `${created} pods created in ${(timings.podsCreatedMs / 1000).toFixed(
        1,
      )} s`,
    );
    await waitPodsRunning(kube, pods);
    timings.podsRunningMs = Date.now() - t;
    log(
      `all ${pods} pods Running after ${(timings.podsRunningMs / 1000).toFixed(
        1,
      )} s`,
    );
  }
  return { names, timings };
}

/**
 * A delete-collection call. The apiserver ends one that outlasts its 60 s request timeout
 * with a 504 or by closing the connection; neither is an error here (the caller calls
 * again for what is left).
 */
async function deleteCollection(kube, collection) {
  let r;
  try {
    r = await kube.request('DELETE', collection);
  } catch (error) {
    if (error.code === 'ECONNRESET' || /socket hang up/.test(error.message))
      return;
    throw error;
  }
  if (r.status >= 300 && r.status !== 504)
    throw new Error(
      `DELETE ${collection}: ${r.status} ${r.body?.message ?? ''}`,
    );
}

/**
 * Removes the scale fixture: the pods (delete-collection with grace 0 per namespace), the
 * namespaces, then the nodes (one delete-collection). Resolves when all are gone.
 */
export async function teardownScale(kube, { timeoutMs = 600_000 } = {}) {
  const t = Date.now();
  const { items: namespaces } = await kube.listAll('/api/v1/namespaces', {
    labelSelector: `${SCALE_LABEL}=true`,
  });
  const selector = new URLSearchParams({
    labelSelector: `${SCALE_LABEL}=true`,
    gracePeriodSeconds: '0',
  });
  // One delete-collection per namespace, side by side: the apiserver works through each
  // collection with --delete-collection-workers (1), and answers 504 when that takes longer
  // than its 60 s request timeout; whatever is left gets another call, until none is.
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await pool(namespaces, 10, ns =>
      deleteCollection(
        kube,
        `/api/v1/namespaces/${ns.metadata.name}/pods?${selector}`,
      ),
    );
    const { pods } = await scaleCounts(kube);
    if (pods === 0) break;
    if (Date.now() > deadline)
      throw new Error(`${pods} scale pods left after teardown`);
  }
  await pool(namespaces, 4, async ns => {
    const r = await kube.request(
      'DELETE',
      `/api/v1/namespaces/${ns.metadata.name}`,
    );
    if (r.status >= 300 && r.status !== 404)
      throw new Error(`delete namespace ${ns.metadata.name}: ${r.status}`);
  });
  const podsGoneMs = Date.now() - t;
  const nodeSelector = new URLSearchParams({
    labelSelector: `${SCALE_LABEL}=true`,
  });
  for (;;) {
    await deleteCollection(kube, `/api/v1/nodes?${nodeSelector}`);
    const { nodes } = await scaleCounts(kube);
    if (nodes === 0) break;
    if (Date.now() > deadline)
      throw new Error(`${nodes} scale nodes left after teardown`);
  }
  for (;;) {
    const { items: left } = await kube.listAll('/api/v1/namespaces', {
      labelSelector: `${SCALE_LABEL}=true`,
    });
    if (left.length === 0) break;
    if (Date.now() > deadline)
      throw new Error(`${left.length} scale namespaces left after teardown`);
    await sleep(1000);
  }
  return { podsGoneMs, allGoneMs: Date.now() - t };
}

export { CLUSTER as clusterName };
