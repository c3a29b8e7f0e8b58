#!/usr/bin/env node
// The servers list at 1,000, 5,000 and 10,000 nodes (bench/README.md, issue 21), grown
// in one rack, each size measured with a backend of its own (the demo backend with
// permission checks on: the real permission framework with Rackside's app-config policy;
// the guest signs in as user:default/guest of examples/org.yaml, a plant admin, or --user):
//
// - the route as the Servers page asks it (`?limit=100&sort=name&direction=asc`, the first
//   window), the next window (`continue`), a new filter each request (a new walk over every
//   row) and the whole list (no parameters), next to `kubectl get nodes` of the same
//   cluster (the backend's ServiceAccount) in the same run;
// - the Servers page in headless Chromium until its table shows rows: loaded in a new tab
//   (HTTP cache off, then on) and from a click in the app, each with the page's own part
//   (from its loader's first request to the first row; before it, the app's boot);
// - the backend's RSS, and the watches the backend process opened (counted by the
//   apiserver per ServiceAccount, API Priority and Fairness FlowSchemas of this bench) and
//   the most Node watches open at once (the figure held against the goal of one);
// - all of it once the catalog holds every server and the backend has gone quiet (each
//   run starts the backend on an empty database, and a portal ingests its servers once);
// - at one size (5,000), an open page left alone for 60 s: the change signals it received
//   and the bytes it fetched (goal 0 and 0), then a control (a cordon: one signal, one
//   refetch) that shows the page was listening.
//
// The last line gives the figures.
//
//   node bench/servers-list.mjs                    # 1,000 / 5,000 / 10,000 nodes, 2 pods a node
//   node bench/servers-list.mjs --rack DIR         # on a running rack (grown as needed)
//   node bench/servers-list.mjs --sizes 5000       # one size
//   node bench/servers-list.mjs --quick            # 100 / 300 nodes, few samples (smoke)
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { writeTokenKubeconfig } from '../e2e/rack/rack.mjs';
import { launchBrowser } from '../e2e/tests/harness.mjs';
import { startPostgres } from '../e2e/tests/postgres.mjs';
import {
  describeLoad,
  loadSampler,
  processCpuSampler,
  describeProcessCpu,
  log,
  machine,
  mb,
  ms,
  parseFlags,
  percentile,
  ROOT,
  runBench,
  runLogDir,
  seconds,
  sleep,
  summary,
  UsageError,
} from './lib/common.mjs';
import { cpuSeconds, startBackend } from './lib/backend.mjs';
import { formatCpuSummary, summariseCpuProfile } from './lib/cpuProfile.mjs';
import {
  inspectorOf,
  startCpuProfile,
  startEventLoopDelay,
} from './lib/inspector.mjs';
import { benchRack, CLUSTER, ensureScale } from './lib/rack.mjs';

const USAGE =
  'usage: node bench/servers-list.mjs [--quick] [--keep] [--rack DIR] [--sizes N,N,...] [--pods-per-node N] [--idle-at N] [--idle-seconds S] [--requests N] [--pages N] [--user NAME] [--database postgres|sqlite]';
const FLAGS = {
  quick: {
    type: 'boolean',
    default: false,
    help: 'smoke run: 100 and 300 nodes, 10 requests, 1 page load, 15 idle seconds',
  },
  rack: {
    type: 'string',
    help: 'use this running rack (grown to each size if short)',
  },
  sizes: {
    type: 'string',
    help: 'node counts to measure, in order, comma separated (1000,5000,10000)',
  },
  nodes: { type: 'number', help: 'one size only (as --sizes N)' },
  podsPerNode: {
    type: 'number',
    default: 2,
    help: 'scale pods per node (20,000 at 10,000 nodes; the list does not read pods)',
  },
  idleAt: {
    type: 'number',
    help: 'the size at which an open page is left idle (5000; the last size with --quick)',
  },
  idleSeconds: { type: 'number', help: 'how long the page is idle (60)' },
  requests: { type: 'number', help: 'timed requests of the route (50)' },
  pages: { type: 'number', help: 'timed page loads, each cache mode (5)' },
  kubectlRuns: { type: 'number', help: 'timed kubectl get nodes (5)' },
  user: {
    type: 'string',
    default: 'guest',
    help: 'the examples/org.yaml user the guest signs in as',
  },
  cpuProfile: {
    type: 'boolean',
    default: false,
    help: "profile the backend's CPU during the page's window requests and during the cold visits, and measure its event-loop delay during the cold visits",
  },
  pageProfile: {
    type: 'boolean',
    default: false,
    help: "profile the page's JavaScript during the first cold visit and the first visit from a click in the app (page-<size>.cpuprofile and page-<size>-in-app.cpuprofile in the logs; summarise with bench/lib/pageProfile.mjs)",
  },
  database: {
    type: 'string',
    default: 'postgres',
    help: "the backend's database: postgres (app-config.production.yaml, a PostgreSQL server of its own for each size, Debian's postgresql installed when missing) or sqlite (the demo's in-memory SQLite, whose queries run on the backend's event loop)",
  },
  backendRoot: {
    type: 'string',
    help: 'run the backend of another checkout (a patched copy, to measure a change)',
  },
  keep: {
    type: 'boolean',
    default: false,
    help: 'keep the rack it starts (grown to the last size) and print its directory, for a rerun with --rack DIR',
  },
  settleMinutes: {
    type: 'number',
    default: 5,
    help: 'how long to wait, before measuring, for the catalog to hold every server and then the backend to go quiet (at least 1 min for the latter)',
  },
  timeoutMinutes: {
    type: 'number',
    default: 90,
    help: 'give up after this long',
  },
};

/** The first window as the Servers page asks for it (plugins/servers useServerWindows). */
const PAGE_WINDOW = 'limit=100&sort=name&direction=asc';
const SIGNAL_CHANNEL = 'rackside:servers';
const BACKEND_SA = { namespace: 'rackside-system', name: 'rackside-backstage' };
const FLOW = '/apis/flowcontrol.apiserver.k8s.io/v1/flowschemas';

class RouteError extends Error {
  constructor(status, body) {
    let message = body.slice(0, 300);
    try {
      message = JSON.parse(body).error?.message ?? message;
    } catch {
      /* not JSON */
    }
    super(`${status} ${message}`);
    this.status = status;
  }
}

async function timedFetch(url, token) {
  const t0 = performance.now();
  const r = await fetch(url, { headers: { authorization: `Bearer ${token}` } });
  const body = await r.text();
  const t = performance.now() - t0;
  if (!r.ok) throw new RouteError(r.status, body);
  return { ms: t, body, encoding: r.headers.get('content-encoding') };
}

/** Waits until the backend's CPU use stays under 20 % for 10 s (catalog ingestion done). */
async function settle(pid, { timeoutMs = 300_000 } = {}) {
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

/**
 * Waits until the catalog holds `count` server entities (Resources of type server, as the
 * catalog module publishes them); the time it took, or undefined at the timeout.
 */
async function catalogHolds(baseUrl, token, count, { timeoutMs }) {
  const t0 = Date.now();
  const url = `${baseUrl}/api/catalog/entities/by-query?filter=kind=resource,spec.type=server&limit=1&fields=metadata.name`;
  while (Date.now() - t0 < timeoutMs) {
    const r = await fetch(url, {
      headers: { authorization: `Bearer ${token}` },
    });
    if (r.ok && (await r.json()).totalItems >= count) return Date.now() - t0;
    await sleep(5000);
  }
  return undefined;
}

function rssBytes(pid) {
  const m = /^VmRSS:\s+(\d+) kB$/m.exec(
    fs.readFileSync(`/proc/${pid}/status`, 'utf8'),
  );
  return m ? Number(m[1]) * 1024 : NaN;
}

/** Samples a process's RSS every second; `stop()` returns the max. */
function rssSampler(pid) {
  let max = rssBytes(pid);
  const timer = setInterval(() => {
    try {
      max = Math.max(max, rssBytes(pid));
    } catch {
      /* gone */
    }
  }, 1000);
  timer.unref();
  return {
    stop() {
      clearInterval(timer);
      return max;
    },
  };
}

function kubectlGetNodes(kubectl, kubeconfig) {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(kubectl, ['--kubeconfig', kubeconfig, 'get', 'nodes'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let lines = 0;
    let err = '';
    child.stdout.on('data', d => (lines += String(d).split('\n').length - 1));
    child.stderr.on('data', d => (err += d));
    child.on('exit', code =>
      code === 0
        ? resolve({ ms: performance.now() - t0, lines })
        : reject(new Error(`kubectl get nodes exited ${code}: ${err}`)),
    );
  });
}

// ---------------------------------------------------------------------------------------
// Watches of the backend, counted by the apiserver

/** FlowSchemas that count the backend's Node watches and its other watches apart. */
function watchFlowSchemas() {
  const rule = (apiGroups, resources) => ({
    subjects: [{ kind: 'ServiceAccount', serviceAccount: BACKEND_SA }],
    resourceRules: [
      {
        verbs: ['watch'],
        apiGroups,
        resources,
        clusterScope: true,
        namespaces: ['*'],
      },
    ],
  });
  return [
    ['bench-list-backend-node-watch', 150, rule([''], ['nodes'])],
    ['bench-list-backend-watch', 151, rule(['*'], ['*'])],
  ].map(([name, precedence, r]) => ({
    apiVersion: 'flowcontrol.apiserver.k8s.io/v1',
    kind: 'FlowSchema',
    metadata: { name, labels: { 'bench.rackside.dev/servers-list': 'true' } },
    spec: {
      matchingPrecedence: precedence,
      priorityLevelConfiguration: { name: 'workload-low' },
      distinguisherMethod: { type: 'ByUser' },
      rules: [r],
    },
  }));
}

/**
 * Samples the Node watches open on the apiserver every 2 s; `stop()` resolves with the most
 * open at once, less `baseline` (those open before the backend started).
 */
function openNodeWatchSampler(kube, baseline) {
  let most = 0;
  // A sample that fails (the apiserver busy) is skipped; the next one counts.
  const sample = () =>
    watchCounts(kube).then(
      ({ openNodeWatches }) => {
        most = Math.max(most, openNodeWatches - baseline);
      },
      () => {},
    );
  let pending = sample();
  const timer = setInterval(() => {
    pending = pending.then(sample);
  }, 2000);
  return {
    async stop() {
      clearInterval(timer);
      await pending;
      await sample();
      return most;
    },
  };
}

/**
 * From the apiserver's /metrics: watch requests of the backend's ServiceAccount so far
 * (Node watches and all), and the Node watches open now (every client's).
 */
async function watchCounts(kube) {
  const r = await kube.request('GET', '/metrics', undefined, {
    headers: { accept: 'text/plain' },
  });
  if (r.status !== 200) throw new Error(`GET /metrics: ${r.status}`);
  const out = { nodeWatches: 0, watches: 0, openNodeWatches: 0 };
  for (const line of String(r.body).split('\n')) {
    let m =
      /^apiserver_flowcontrol_dispatched_requests_total\{([^}]*)\} (\S+)$/.exec(
        line,
      );
    if (m) {
      if (m[1].includes('flow_schema="bench-list-backend-node-watch"'))
        out.nodeWatches += Number(m[2]);
      if (/flow_schema="bench-list-backend-(node-)?watch"/.test(m[1]))
        out.watches += Number(m[2]);
      continue;
    }
    m = /^apiserver_longrunning_requests\{([^}]*)\} (\S+)$/.exec(line);
    if (m && /resource="nodes"/.test(m[1]) && /verb="WATCH"/.test(m[1]))
      out.openNodeWatches += Number(m[2]);
  }
  return out;
}

// ---------------------------------------------------------------------------------------
// The page

/**
 * The requests of a visit that started before its first row, on the page's clock less
 * `from` (the navigation, or a click): what is serial before the row.
 */
function requestsUntil(finished, origin, rowAt, from = 0) {
  return finished
    .map(req => {
      const t = req.timing();
      const start = t.startTime - origin;
      const url = new URL(req.url());
      return {
        what: `${req.method()} ${url.pathname}${url.search.slice(0, 40)}`,
        start: start - from,
        end: start + t.responseEnd - from,
      };
    })
    .filter(r => r.start >= 0 && r.start + from <= rowAt)
    .sort((a, b) => a.start - b.start);
}

/**
 * One visit of /servers (signed in by the warm-up visit; signs in again if the page asks):
 * from navigation start to the first row of the table in the DOM, and the list request's
 * own timing, all on the page's clock.
 */
async function pageLoad(
  context,
  baseUrl,
  { cacheDisabled = false, profileTo } = {},
) {
  const page = await context.newPage();
  page.setDefaultTimeout(120_000);
  try {
    const cdp =
      cacheDisabled || profileTo
        ? await context.newCDPSession(page)
        : undefined;
    if (cacheDisabled) {
      // A first visit: every script and the list fetched and compiled afresh.
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    }
    // The page's JavaScript from navigation to the first row (--page-profile).
    if (profileTo) await startProfile(cdp);
    let listRequest;
    const finished = [];
    page.on('requestfinished', req => {
      finished.push(req);
      if (req.url().includes(`/api/servers/clusters/${CLUSTER}/servers`))
        listRequest ??= req;
    });
    const t0 = Date.now();
    await page.goto(`${baseUrl}/servers`);
    const signedIn = await waitForRows(page);
    if (profileTo) await stopProfile(cdp, profileTo);
    if (signedIn.error) return signedIn;
    const wall = Date.now() - t0;
    const timing = listRequest?.timing();
    const nav = await page.evaluate(() => ({
      origin: performance.timeOrigin,
      rowAt: window.__benchFirstRowAt,
      domContentLoaded:
        performance.getEntriesByType('navigation')[0]?.domContentLoadedEventEnd,
    }));
    const listStartMs = timing ? timing.startTime - nav.origin : undefined;
    return {
      requests: requestsUntil(finished, nav.origin, nav.rowAt),
      wall,
      signedIn: signedIn.signedIn,
      rowAt: nav.rowAt,
      listStartMs,
      listEndMs: timing ? listStartMs + timing.responseEnd : undefined,
      domContentLoaded: nav.domContentLoaded,
      listUrl: listRequest?.url(),
    };
  } finally {
    await page.close();
  }
}

/**
 * One visit of /servers the way a user already in the portal makes it: the catalog is
 * open (the app booted, signed in), the sidebar's Servers item is clicked, and the time
 * runs from the click to the first row. The app's own boot is not in it; the plugin's
 * chunks, its requests and its render are.
 */
/** Starts the JavaScript profiler of a page's CDP session. */
async function startProfile(cdp) {
  await cdp.send('Profiler.enable');
  await cdp.send('Profiler.setSamplingInterval', { interval: 250 });
  await cdp.send('Profiler.start');
  return cdp;
}

async function stopProfile(cdp, file) {
  const { profile } = await cdp.send('Profiler.stop');
  fs.writeFileSync(file, JSON.stringify(profile));
}

async function inAppVisit(context, baseUrl, { profileTo } = {}) {
  const page = await context.newPage();
  page.setDefaultTimeout(120_000);
  try {
    await page.goto(`${baseUrl}/catalog`);
    const servers = page.locator('nav a[href$="/servers"]').first();
    const enter = page.getByRole('button', { name: 'Enter' });
    await Promise.race([servers.waitFor(), enter.waitFor()]);
    if (await enter.isVisible()) await enter.click();
    await servers.waitFor();
    await page
      .waitForLoadState('networkidle', { timeout: 30_000 })
      .catch(() => {});
    const finished = [];
    page.on('requestfinished', req => finished.push(req));
    const cdp = profileTo
      ? await startProfile(await context.newCDPSession(page))
      : undefined;
    const clickedAt = await page.evaluate(() => performance.now());
    await servers.click();
    const rows = await waitForRows(page);
    if (cdp) await stopProfile(cdp, profileTo);
    if (rows.error) return rows;
    const { rowAt, origin } = await page.evaluate(() => ({
      rowAt: window.__benchFirstRowAt,
      origin: performance.timeOrigin,
    }));
    return {
      rowAt: rowAt - clickedAt,
      // From the click, what the plugin's part waits for.
      requests: requestsUntil(finished, origin, rowAt, clickedAt),
    };
  } finally {
    await page.close();
  }
}

/**
 * What the page shows of the Servers page's start, checked in the page itself: 'rows'
 * once the first row is in the DOM (the init script's mark), 'enter' for the sign-in
 * button, 'failed' for the table's error. Polled each frame with a few DOM lookups, not
 * with Playwright locators: their selector engines (text and accessible names over the
 * whole DOM, every frame) took 20-35 ms of the page's main thread in each measured visit.
 */
function pageState(page, cluster) {
  return page
    .waitForFunction(
      c => {
        if (window.__benchFirstRowAt !== undefined) return 'rows';
        const failed = `Could not load the servers of ${c}`;
        for (const alert of document.querySelectorAll('[role="alert"]'))
          if (alert.textContent.includes(failed)) return 'failed';
        for (const button of document.querySelectorAll('button'))
          if (button.textContent.trim() === 'Enter') return 'enter';
        return false;
      },
      cluster,
      { polling: 'raf', timeout: 120_000 },
    )
    .then(handle => handle.jsonValue());
}

/** Waits for the first row (signing in if the page asks); `{error}` if the page failed. */
async function waitForRows(page) {
  let state = await pageState(page, CLUSTER);
  let signedIn = false;
  if (state === 'enter') {
    signedIn = true;
    await page.getByRole('button', { name: 'Enter' }).click();
    state = await pageState(page, CLUSTER);
  }
  if (state === 'failed')
    return {
      error: await page
        .getByText(`Could not load the servers of ${CLUSTER}`)
        .textContent(),
    };
  return { signedIn };
}

/**
 * An open Servers page left alone: the HTTP requests it makes (and their bytes on the
 * wire) and the WebSocket frames it receives (the signals plugin's, the change signal
 * among them) while `idleSeconds` pass. Then a control: a Node of the cluster is
 * cordoned, which must reach the page as one signal and a refetch of its window, and
 * is uncordoned again.
 */
async function idlePage(context, baseUrl, kube, { idleSeconds, node }) {
  const page = await context.newPage();
  page.setDefaultTimeout(120_000);
  const cdp = await context.newCDPSession(page);
  await cdp.send('Network.enable');
  const urls = new Map();
  let phase = 'load';
  const seen = { idle: newTally(), control: newTally() };
  cdp.on('Network.requestWillBeSent', e => {
    urls.set(e.requestId, e.request.url);
    seen[phase]?.requests.push(new URL(e.request.url).pathname);
  });
  cdp.on('Network.loadingFinished', e => {
    const tally = seen[phase];
    if (!tally) return;
    tally.bytes += e.encodedDataLength;
    if (urls.get(e.requestId)?.includes(`/clusters/${CLUSTER}/servers`))
      tally.listFetches++;
  });
  cdp.on('Network.webSocketFrameReceived', e => {
    const tally = seen[phase];
    if (!tally) return;
    tally.frames++;
    tally.frameBytes += e.response.payloadData.length;
    if (e.response.payloadData.includes(SIGNAL_CHANNEL)) {
      tally.signals++;
      tally.signalAt ??= Date.now();
    }
  });
  let subscribed = false;
  cdp.on('Network.webSocketFrameSent', e => {
    if (e.response.payloadData.includes(SIGNAL_CHANNEL)) subscribed = true;
  });
  try {
    await page.goto(`${baseUrl}/servers`);
    const rows = await waitForRows(page);
    if (rows.error) throw new Error(`idle page: ${rows.error}`);
    // Until the page's start-up requests are done.
    await page
      .waitForLoadState('networkidle', { timeout: 30_000 })
      .catch(() => {});
    await waitUntil(() => subscribed, 30_000);
    await sleep(3000);
    phase = 'idle';
    const t0 = Date.now();
    await sleep(idleSeconds * 1000);
    const idleMs = Date.now() - t0;
    // The control: one change a page shows.
    phase = 'control';
    const c0 = Date.now();
    await setUnschedulable(kube, node, true);
    const reached = await waitUntil(
      () => seen.control.signals > 0 && seen.control.listFetches > 0,
      30_000,
    );
    const controlMs = reached ? Date.now() - c0 : undefined;
    const signalMs =
      seen.control.signalAt !== undefined ? seen.control.signalAt - c0 : NaN;
    await sleep(2000);
    phase = 'after';
    await setUnschedulable(kube, node, false);
    return {
      subscribed,
      idleMs,
      idle: seen.idle,
      control: { ...seen.control, reached: controlMs, signalMs },
    };
  } finally {
    phase = 'done';
    await page.close();
  }
}

function newTally() {
  return {
    requests: [],
    bytes: 0,
    listFetches: 0,
    frames: 0,
    frameBytes: 0,
    signals: 0,
    signalAt: undefined,
  };
}

async function waitUntil(fn, timeoutMs) {
  const t0 = Date.now();
  while (!fn()) {
    if (Date.now() - t0 > timeoutMs) return false;
    await sleep(100);
  }
  return true;
}

async function setUnschedulable(kube, node, value) {
  const r = await kube.request(
    'PATCH',
    `/api/v1/nodes/${node}`,
    { spec: { unschedulable: value ? true : null } },
    { contentType: 'application/merge-patch+json' },
  );
  if (r.status !== 200)
    throw new Error(`cordon ${node}: ${r.status} ${r.body?.message ?? ''}`);
}

// ---------------------------------------------------------------------------------------
// One size

async function measureSize(ctx, { rack, flags, logs, browser, size, plan }) {
  const pods = size * flags.podsPerNode;
  log(`growing the rack to ${size} nodes and ${pods} pods`);
  const grown = await ensureScale(rack.kube, { nodes: size, pods });
  const nodeCount = await rack.kube.countAll('/api/v1/nodes');
  const podCount = await rack.kube.countAll('/api/v1/pods', {
    labelSelector: 'bench.rackside.dev/scale=true',
  });
  const before = await watchCounts(rack.kube);
  const root = flags.backendRoot ? path.resolve(flags.backendRoot) : ROOT;
  // The production database (a PostgreSQL server of its own for each size), or the
  // demo's in-memory SQLite with --database sqlite.
  const pg = flags.database === 'postgres' ? await startPostgres() : undefined;
  let pgStopped = !pg;
  const stopPg = async () => {
    if (pgStopped) return;
    pgStopped = true;
    await pg.stop();
  };
  ctx.onCleanup(stopPg);
  const backend = await startBackend(rack.dir, {
    user: flags.user,
    root,
    logFile: path.join(logs, `backend-${size}.log`),
    configs: pg ? [path.join(root, 'app-config.production.yaml')] : [],
    env: {
      ...(flags.cpuProfile ? { NODE_OPTIONS: '--inspect=127.0.0.1:0' } : {}),
      ...(pg
        ? {
            POSTGRES_HOST: pg.host,
            POSTGRES_PORT: String(pg.port),
            POSTGRES_USER: pg.user,
            POSTGRES_PASSWORD: pg.password,
          }
        : {}),
    },
    // Built (when stale) for the first size only: every size serves the same app.
    buildApp: plan.firstSize === size,
  });
  let stopped = false;
  const stopBackend = async () => {
    if (stopped) return;
    stopped = true;
    await backend.stop();
  };
  ctx.onCleanup(stopBackend);
  const pid = backend.pid();
  if (!pid) throw new Error('could not find the backend process');
  const base = `${backend.baseUrl}/api/servers/clusters/${CLUSTER}/servers`;
  // The backend's start-up work first: the catalog ingests the server entities (each
  // run starts on an empty database) and the users and groups the policy reads. A portal
  // does that once, when it is first deployed, so the figures wait for the catalog to hold
  // every server and then for the backend to go quiet; what load is left is the portal's
  // steady state (the catalog's periodic processing included). Then until the list has
  // every node. An answer the route keeps giving after that (a 4xx) is the result, not a
  // reason to stop.
  const settleStart = Date.now();
  const token = await backend.token();
  const catalogMs = await catalogHolds(backend.baseUrl, token, nodeCount, {
    timeoutMs: flags.settleMinutes * 60_000,
  });
  const settledMs = await settle(pid, {
    timeoutMs: Math.max(
      60_000,
      flags.settleMinutes * 60_000 - (Date.now() - settleStart),
    ),
  });
  log(
    `${
      catalogMs === undefined
        ? `the catalog did not hold the ${nodeCount} servers after ${flags.settleMinutes} min`
        : `the catalog held the ${nodeCount} servers after ${seconds(
            catalogMs,
          )}`
    }; ${
      settledMs === undefined
        ? 'the backend did not go quiet after that; measuring anyway'
        : `the backend quiet ${seconds(settledMs)} later`
    }`,
  );
  let routeError;
  for (const t0 = Date.now(); ; ) {
    try {
      const { body } = await timedFetch(`${base}?${PAGE_WINDOW}`, token);
      if (JSON.parse(body).total === nodeCount) break;
    } catch (error) {
      if (!(error instanceof RouteError) || error.status === 503) {
        if (Date.now() - t0 > 120_000) throw error;
      } else if (Date.now() - t0 > 30_000) {
        routeError = error;
        log(`the route answers ${error.message}`);
        break;
      }
    }
    if (Date.now() - t0 > 120_000)
      throw new Error(`the route did not list ${nodeCount} servers in 120 s`);
    await sleep(1000);
  }
  const settledRss = rssBytes(pid);
  const rss = rssSampler(pid);
  const openWatches = openNodeWatchSampler(rack.kube, before.openNodeWatches);

  // The route, warm, one request at a time.
  const timed = async (url, n) => {
    const out = [];
    let last;
    for (let i = 0; i < n; i++) {
      last = await timedFetch(typeof url === 'function' ? url(i) : url, token);
      out.push(last.ms);
    }
    return { ms: out, last };
  };
  const route = {};
  if (!routeError) {
    for (let i = 0; i < 3; i++)
      await timedFetch(`${base}?${PAGE_WINDOW}`, token);
    const profiler = flags.cpuProfile
      ? await startCpuProfile(await inspectorOf(backend.logFile, 'src/index'))
      : undefined;
    const cpu0 = cpuSeconds(pid);
    route.first = await timed(`${base}?${PAGE_WINDOW}`, plan.requests);
    route.cpuPerRequest =
      ((cpuSeconds(pid) - cpu0) * 1000) / Math.max(1, plan.requests);
    if (profiler)
      route.profile = formatCpuSummary(
        summariseCpuProfile(
          await profiler.stop(path.join(logs, `backend-${size}.cpuprofile`)),
          { top: 25 },
        ),
      );
    const first = JSON.parse(route.first.last.body);
    route.firstItems = first.items.length;
    route.firstBytes = route.first.last.body.length;
    const next = first.continue
      ? `${base}?${PAGE_WINDOW}&continue=${encodeURIComponent(first.continue)}`
      : `${base}?${PAGE_WINDOW}`;
    route.next = await timed(next, plan.requests);
    // Each a filter no walk has had yet: the filter and the sort run over every row.
    route.filtered = await timed(
      i => `${base}?${PAGE_WINDOW}&filter=${encodeURIComponent(`-${i}`)}`,
      plan.newWalks,
    );
    route.full = await timed(base, plan.fullRequests);
    const whole = JSON.parse(route.full.last.body);
    route.fullItems = whole.items.length;
    route.fullBytes = route.full.last.body.length;
    route.fullEncoding = route.full.last.encoding ?? 'identity';
  }

  // kubectl get nodes, as the backend's ServiceAccount.
  const kubeconfig = writeTokenKubeconfig({
    server: rack.info.server,
    caFile: rack.info.caFile,
    token: fs
      .readFileSync(path.join(rack.dir, 'backstage.token'), 'utf8')
      .trim(),
    file: path.join(rack.dir, 'backstage.kubeconfig'),
  });
  const kubectlMs = [];
  let kubectlLines = 0;
  for (let i = 0; i < plan.kubectlRuns; i++) {
    const r = await kubectlGetNodes(rack.info.kubectl, kubeconfig);
    kubectlMs.push(r.ms);
    kubectlLines = r.lines;
  }

  // The page: one warm-up visit (signs in, fills the cache), then timed.
  await pageLoad(browser.context, backend.baseUrl);
  const visits = [];
  // Where the machine's cores go during the cold visits, and (--cpu-profile) what the
  // backend does meanwhile and how long its event loop makes a request wait.
  const coldCpu = processCpuSampler({ [pid]: 'backend' });
  const coldBackend = flags.cpuProfile
    ? await inspectorOf(backend.logFile, 'src/index')
    : undefined;
  const coldProfiler = coldBackend && (await startCpuProfile(coldBackend));
  const coldLoop = coldBackend && (await startEventLoopDelay(coldBackend));
  for (let i = 0; i < plan.pages; i++)
    visits.push({
      ...(await pageLoad(browser.context, backend.baseUrl, {
        cacheDisabled: true,
        profileTo:
          flags.pageProfile && i === 0
            ? path.join(logs, `page-${size}.cpuprofile`)
            : undefined,
      })),
      cache: 'off',
    });
  const cold = { cpu: coldCpu.stop() };
  if (coldBackend) {
    cold.loopDelay = await coldLoop.stop();
    cold.profile = formatCpuSummary(
      summariseCpuProfile(
        await coldProfiler.stop(
          path.join(logs, `backend-${size}-cold-visits.cpuprofile`),
        ),
        { top: 25 },
      ),
    );
    coldBackend.close();
  }
  for (let i = 0; i < plan.pages; i++)
    visits.push({
      ...(await pageLoad(browser.context, backend.baseUrl)),
      cache: 'on',
    });
  for (let i = 0; i < plan.pages; i++)
    visits.push({
      ...(await inAppVisit(browser.context, backend.baseUrl, {
        profileTo:
          flags.pageProfile && i === 0
            ? path.join(logs, `page-${size}-in-app.cpuprofile`)
            : undefined,
      })),
      cache: 'in-app',
    });

  let idle;
  if (size === plan.idleAt) {
    log(`an open page left alone for ${plan.idleSeconds} s`);
    idle = await idlePage(browser.context, backend.baseUrl, rack.kube, {
      idleSeconds: plan.idleSeconds,
      node: grown.names[0] ?? 'worker-1',
    });
  }
  const maxRss = rss.stop();
  const after = await watchCounts(rack.kube);
  const mostOpen = await openWatches.stop();
  await stopBackend();
  await stopPg();
  return {
    size,
    nodeCount,
    podCount,
    routeError,
    route,
    kubectlMs,
    kubectlLines,
    visits,
    cold,
    settledRss,
    maxRss,
    watches: {
      node: after.nodeWatches - before.nodeWatches,
      all: after.watches - before.watches,
      mostOpenNodeDelta: mostOpen,
    },
    idle,
  };
}

// ---------------------------------------------------------------------------------------
// Output

const p = (values, q) => ms(percentile(values, q));

/** What the Servers page's loader asks first, with the page's chunks (pageStart.ts). */
const LOADER_FIRST_REQUEST = 'GET /api/servers/clusters';

/**
 * The page's own part of a visit: from its loader's first request (asked as the page's
 * code is asked, once the app has booted and routed) to the first row. Before it, the
 * time is the app's (its scripts, the sign-in, the shell); after it, the plugin's (its
 * chunks, its requests, its render). Undefined when the request was not seen.
 */
function ownPartOf(visit) {
  const first = visit.requests?.find(q => q.what === LOADER_FIRST_REQUEST);
  return first ? visit.rowAt - first.start : undefined;
}

function pageFigures(visits) {
  const cold = visits.filter(v => !v.error && v.cache === 'off');
  const warm = visits.filter(v => !v.error && v.cache === 'on');
  const inApp = visits.filter(v => !v.error && v.cache === 'in-app');
  return {
    inApp: percentile(
      inApp.map(v => v.rowAt),
      50,
    ),
    cold: percentile(
      cold.map(v => v.rowAt),
      50,
    ),
    warm: percentile(
      warm.map(v => v.rowAt),
      50,
    ),
    afterAnswer: percentile(
      cold
        .filter(v => v.listEndMs !== undefined)
        .map(v => v.rowAt - v.listEndMs),
      50,
    ),
    ownCold: percentile(cold.map(ownPartOf).filter(Number.isFinite), 50),
    ownInApp: percentile(inApp.map(ownPartOf).filter(Number.isFinite), 50),
    shown: cold.length,
  };
}

function printSize(r, flags) {
  console.log(
    `== ${r.nodeCount} nodes, ${r.podCount} scale pods; user:default/${flags.user}; backend database ${flags.database}`,
  );
  if (r.routeError)
    console.log(
      `route GET /api/servers/clusters/${CLUSTER}/servers fails: ${r.routeError.message}`,
    );
  else {
    const { route } = r;
    const line = (what, s) => {
      const v = summary(s.ms);
      return `${what}, ${v.n} requests one at a time: p50 ${ms(
        v.p50,
      )}, p95 ${ms(v.p95)}, max ${ms(v.max)}`;
    };
    console.log(
      `${line(
        `route ?${PAGE_WINDOW} (the page's first window: ${
          route.firstItems
        } rows, ${(route.firstBytes / 1e3).toFixed(0)} kB)`,
        route.first,
      )}; backend CPU ${ms(route.cpuPerRequest)} a request`,
    );
    console.log(line('route, the next window (continue)', route.next));
    console.log(
      line(
        'route, a new filter each request (a new walk: filter and sort over every row)',
        route.filtered,
      ),
    );
    console.log(
      line(
        `route, the whole list (no parameters: ${route.fullItems} rows, ${(
          route.fullBytes / 1e6
        ).toFixed(1)} MB, sent ${route.fullEncoding})`,
        route.full,
      ),
    );
    if (route.profile)
      console.log(
        `backend CPU profile of the first-window requests:\n${route.profile}`,
      );
  }
  console.log(
    `kubectl get nodes (${r.kubectlLines - 1} rows), ${
      r.kubectlMs.length
    } runs: p50 ${p(r.kubectlMs, 50)}, max ${ms(Math.max(...r.kubectlMs))}`,
  );
  for (const [i, v] of r.visits.entries())
    if (v.error) console.log(`page ${i + 1}: no table: ${v.error}`);
    else if (v.cache === 'in-app')
      console.log(
        `page ${i + 1} (in the app): sidebar click -> first row ${ms(
          v.rowAt,
        )} (the page's own part ${ms(ownPartOf(v) ?? NaN)})`,
      );
    else
      console.log(
        `page ${i + 1} (HTTP cache ${v.cache}): navigation -> first row ${ms(
          v.rowAt,
        )} (DOMContentLoaded ${ms(
          v.domContentLoaded ?? NaN,
        )}, list request ${ms(v.listStartMs ?? NaN)} -> ${ms(
          v.listEndMs ?? NaN,
        )}, rows ${ms(
          v.listEndMs !== undefined ? v.rowAt - v.listEndMs : NaN,
        )} after the answer, the page's own part ${ms(ownPartOf(v) ?? NaN)})${
          v.signedIn ? ', signed in again' : ''
        }`,
      );
  for (const [kind, what] of [
    ['off', 'cold visit'],
    ['in-app', 'visit in the app (from the click)'],
  ]) {
    const sorted = r.visits
      .filter(v => !v.error && v.cache === kind)
      .sort((a, b) => a.rowAt - b.rowAt);
    const median = sorted[Math.floor((sorted.length - 1) / 2)];
    if (!median?.requests) continue;
    console.log(
      `requests of the median ${what} before its first row (${ms(
        median.rowAt,
      )}), start -> end:`,
    );
    for (const q of median.requests)
      console.log(`  ${ms(q.start)} -> ${ms(q.end)}  ${q.what}`);
  }
  if (r.cold) {
    console.log(
      `machine during the cold visits: ${describeProcessCpu(r.cold.cpu)}`,
    );
    if (r.cold.loopDelay) {
      const d = r.cold.loopDelay;
      console.log(
        `backend event-loop delay during the cold visits: mean ${ms(
          d.mean,
        )}, p50 ${ms(d.p50)}, p99 ${ms(d.p99)}, max ${ms(d.max)}`,
      );
    }
    if (r.cold.profile)
      console.log(
        `backend CPU profile during the cold visits:\n${r.cold.profile}`,
      );
  }
  const first = r.visits.find(v => v.listUrl);
  if (first) console.log(`the page asked: ${new URL(first.listUrl).search}`);
  console.log(
    `backend RSS: ${mb(r.settledRss)} settled, ${mb(
      r.maxRss,
    )} max during the run`,
  );
  console.log(
    `backend watches (apiserver, the backend's ServiceAccount): ${r.watches.node} Node watch opened, ${r.watches.all} watches in all (a watch ends after 5-10 min and is opened again, as client-go's reflectors do); Node watches open on the apiserver at once, at most: +${r.watches.mostOpenNodeDelta} with the backend up`,
  );
  if (r.idle) {
    const { idle } = r;
    console.log(
      `idle page at ${r.nodeCount} nodes for ${seconds(idle.idleMs)}: ${
        idle.idle.signals
      } change signals (${idle.idle.frames} WebSocket frames, ${
        idle.idle.frameBytes
      } bytes), ${idle.idle.requests.length} HTTP requests (${
        idle.idle.listFetches
      } of the list), ${idle.idle.bytes} bytes fetched${
        idle.idle.requests.length
          ? `: ${[...new Set(idle.idle.requests)].join(', ')}`
          : ''
      }; subscribed to ${SIGNAL_CHANNEL}: ${idle.subscribed ? 'yes' : 'NO'}`,
    );
    console.log(
      `control, a cordon of one node: ${idle.control.signals} signal after ${ms(
        idle.control.signalMs,
      )}, ${idle.control.listFetches} list requests (${
        idle.control.bytes
      } bytes)${
        idle.control.reached === undefined
          ? ' - the page did NOT refetch within 30 s'
          : `, refetched after ${ms(idle.control.reached)}`
      }`,
    );
  }
}

function printTable(results) {
  const rows = results.map(r => {
    const page = pageFigures(r.visits);
    const route = r.route.first ? summary(r.route.first.ms) : undefined;
    const full = r.route.full ? summary(r.route.full.ms) : undefined;
    return [
      String(r.nodeCount),
      route ? `${ms(route.p50)} / ${ms(route.p95)}` : 'fails',
      r.route.filtered ? p(r.route.filtered.ms, 50) : '-',
      full ? `${ms(full.p50)} / ${ms(full.p95)}` : '-',
      p(r.kubectlMs, 50),
      page.shown
        ? `${seconds(page.cold)} / ${seconds(page.warm)} / ${seconds(
            page.inApp,
          )}`
        : 'no table',
      page.shown ? `${ms(page.ownCold)} / ${ms(page.ownInApp)}` : '-',
      mb(r.settledRss),
      String(r.watches.mostOpenNodeDelta),
    ];
  });
  const head = [
    'nodes',
    'page window p50 / p95',
    'new filter p50',
    'whole list p50 / p95',
    'kubectl p50',
    'page cold / warm / in the app',
    "page's own part cold / in the app",
    'RSS',
    'Node watches',
  ];
  const widths = head.map((h, i) =>
    Math.max(h.length, ...rows.map(r => r[i].length)),
  );
  const fmt = r => r.map((c, i) => c.padEnd(widths[i])).join(' | ');
  console.log(fmt(head));
  console.log(widths.map(w => '-'.repeat(w)).join('-|-'));
  for (const r of rows) console.log(fmt(r));
}

runBench(
  'servers-list',
  async ctx => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    ctx.setTimeoutMinutes(flags.timeoutMinutes);
    const sizes = (
      flags.sizes ??
      (flags.nodes !== undefined
        ? String(flags.nodes)
        : flags.quick
        ? '100,300'
        : '1000,5000,10000')
    )
      .split(',')
      .map(Number);
    if (sizes.some(n => !Number.isInteger(n) || n < 10))
      throw new UsageError(`--sizes must be whole numbers >= 10\n\n${USAGE}`);
    if (!['postgres', 'sqlite'].includes(flags.database))
      throw new UsageError(
        `--database must be postgres or sqlite, got ${flags.database}\n\n${USAGE}`,
      );
    const plan = {
      requests: flags.requests ?? (flags.quick ? 10 : 50),
      newWalks: flags.quick ? 5 : 20,
      fullRequests: flags.quick ? 5 : 20,
      pages: flags.pages ?? (flags.quick ? 1 : 5),
      kubectlRuns: flags.kubectlRuns ?? (flags.quick ? 2 : 5),
      idleAt:
        flags.idleAt ??
        (flags.quick || !sizes.includes(5000) ? sizes.at(-1) : 5000),
      idleSeconds: flags.idleSeconds ?? (flags.quick ? 15 : 60),
      firstSize: sizes[0],
    };
    const before = machine();
    const rack = await benchRack({
      rackDir: flags.rack,
      keep: flags.keep,
      heartbeatSeconds: 300,
    });
    ctx.onCleanup(() => rack.stop());
    for (const fs of watchFlowSchemas()) {
      await rack.kube.request('DELETE', `${FLOW}/${fs.metadata.name}`);
      await rack.kube.post(FLOW, fs);
    }
    ctx.onCleanup(async () => {
      for (const fs of watchFlowSchemas())
        await rack.kube.request('DELETE', `${FLOW}/${fs.metadata.name}`);
    });
    const logs = runLogDir('servers-list');
    log(`logs in ${logs}`);

    const browser = await launchBrowser();
    ctx.onCleanup(() => browser.close());
    // Marks when the first row enters the DOM, on the page's own clock (0 = navigation).
    await browser.context.addInitScript(() => {
      new MutationObserver((_, observer) => {
        if (document.querySelector('[data-testid="server-row"]')) {
          window.__benchFirstRowAt = performance.now();
          observer.disconnect();
        }
      }).observe(document, { childList: true, subtree: true });
    });

    const load = loadSampler();
    const results = [];
    for (const size of sizes) {
      const r = await measureSize(ctx, {
        rack,
        flags,
        logs,
        browser,
        size,
        plan,
      });
      results.push(r);
      printSize(r, flags);
    }
    const seen = load.stop();
    await browser.close();

    printTable(results);
    console.log(
      `machine: ${before.cores} cores, ${before.memoryGiB} GiB, ${describeLoad(
        seen,
      )}`,
    );
    const each = f => results.map(f).join(' / ');
    const pages = results.map(r => pageFigures(r.visits));
    const eachPage = f =>
      pages.map(page => (page.shown ? f(page) : 'no table')).join(' / ');
    const idle = results.find(r => r.idle);
    const last = results.at(-1);
    console.log(
      `servers list at ${each(r => r.nodeCount)} nodes: route p95 ${each(r =>
        r.route.first ? ms(summary(r.route.first.ms).p95) : 'FAILS',
      )} as the page asks (goal <= 25 ms at ${
        last.nodeCount
      }), page p50 ${eachPage(f =>
        seconds(f.cold),
      )} to the first row, HTTP cache off (goal <= 1 s; ${eachPage(f =>
        seconds(f.inApp),
      )} from a click in the app; the page's own part, from its loader's first request to the first row, ${eachPage(
        f => `${seconds(f.ownCold)} cold, ${seconds(f.ownInApp)} in the app`,
      )}), kubectl get nodes p50 ${each(r =>
        p(r.kubectlMs, 50),
      )}, backend RSS ${each(r => mb(r.settledRss))}; ${
        idle
          ? `idle page at ${idle.nodeCount} nodes for ${seconds(
              idle.idle.idleMs,
            )}: ${idle.idle.idle.signals} signals, ${
              idle.idle.idle.bytes
            } bytes fetched (goal 0 and 0)`
          : 'no idle page'
      }; Node watches per backend process, open at once ${each(
        r => r.watches.mostOpenNodeDelta,
      )} (goal 1)`,
    );
    if (results.some(r => r.routeError)) process.exitCode = 1;
    if (
      idle &&
      (!idle.idle.subscribed || idle.idle.control.reached === undefined)
    )
      process.exitCode = 1;
  },
  { timeoutMinutes: 90 },
);
