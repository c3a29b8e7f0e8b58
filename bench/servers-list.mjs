#!/usr/bin/env node
// The servers list at 5,000 nodes: `GET /api/servers/clusters/plant-a/servers` of the demo
// backend with permission checks on (the real permission framework with Rackside's
// app-config policy; the guest signs in as user:default/guest of examples/org.yaml, a plant
// admin, or --user), and the Servers page in headless Chromium until its table shows rows,
// next to `kubectl get nodes` of the same cluster (the backend's ServiceAccount). The last
// line gives the route's p95, the page's time and kubectl's.
//
//   node bench/servers-list.mjs --rack DIR   # on the scale fixture (bench/scale.mjs --keep)
//   node bench/servers-list.mjs              # a rack of its own with 5,000 nodes (no pods)
//   node bench/servers-list.mjs --quick      # 200 nodes, few samples (smoke)
import { spawn } from 'node:child_process';
import path from 'node:path';
import { writeTokenKubeconfig } from '../e2e/rack/rack.mjs';
import { launchBrowser } from '../e2e/tests/harness.mjs';
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
  summary,
} from './lib/common.mjs';
import { cpuSeconds, startBackend } from './lib/backend.mjs';
import { formatCpuSummary, summariseCpuProfile } from './lib/cpuProfile.mjs';
import { inspectorOf, startCpuProfile } from './lib/inspector.mjs';
import { benchRack, CLUSTER, ensureScale } from './lib/rack.mjs';
import fs from 'node:fs';

const USAGE =
  'usage: node bench/servers-list.mjs [--quick] [--rack DIR] [--nodes N] [--requests N] [--pages N] [--user NAME]';
const FLAGS = {
  quick: {
    type: 'boolean',
    default: false,
    help: 'smoke run: 200 nodes, 10 requests, 1 page load',
  },
  rack: {
    type: 'string',
    help: 'use this running rack (grown to --nodes if short)',
  },
  nodes: { type: 'number', help: 'nodes in the cluster (5000)' },
  pods: {
    type: 'number',
    default: 0,
    help: 'scale pods for a rack this bench grows (the list does not read pods)',
  },
  requests: { type: 'number', help: 'timed requests of the route (50)' },
  pages: { type: 'number', help: 'timed page loads (5)' },
  kubectlRuns: { type: 'number', help: 'timed kubectl get nodes (5)' },
  user: {
    type: 'string',
    default: 'guest',
    help: 'the examples/org.yaml user the guest signs in as',
  },
  cpuProfile: {
    type: 'boolean',
    default: false,
    help: "profile the backend's CPU during the timed requests and summarise it",
  },
  backendRoot: {
    type: 'string',
    help: 'run the backend of another checkout (a patched copy, to measure a change)',
  },
  timeoutMinutes: {
    type: 'number',
    default: 30,
    help: 'give up after this long',
  },
};

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

/**
 * One visit of /servers (signed in by the warm-up visit; signs in again if the page asks):
 * from navigation start to the first row of the table in the DOM, and the list request's
 * own timing, all on the page's clock.
 */
async function pageLoad(context, baseUrl, { cacheDisabled = false } = {}) {
  const page = await context.newPage();
  page.setDefaultTimeout(120_000);
  try {
    if (cacheDisabled) {
      // A first visit: every script and the list fetched and compiled afresh.
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      await cdp.send('Network.setCacheDisabled', { cacheDisabled: true });
    }
    let listRequest;
    page.on('requestfinished', req => {
      if (req.url().includes(`/api/servers/clusters/${CLUSTER}/servers`))
        listRequest ??= req;
    });
    const t0 = Date.now();
    await page.goto(`${baseUrl}/servers`);
    const row = page.locator('[data-testid="server-row"]').first();
    const failed = page.getByText(`Could not load the servers of ${CLUSTER}`);
    const enter = page.getByRole('button', { name: 'Enter' });
    await Promise.race([row.waitFor(), enter.waitFor(), failed.waitFor()]);
    let signedIn = false;
    if (await enter.isVisible()) {
      signedIn = true;
      await enter.click();
      await Promise.race([row.waitFor(), failed.waitFor()]);
    }
    if (await failed.isVisible()) return { error: await failed.textContent() };
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
      wall,
      signedIn,
      rowAt: nav.rowAt,
      listStartMs,
      listEndMs: timing ? listStartMs + timing.responseEnd : undefined,
      domContentLoaded: nav.domContentLoaded,
    };
  } finally {
    await page.close();
  }
}

runBench(
  'servers-list',
  async ctx => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    ctx.setTimeoutMinutes(flags.timeoutMinutes);
    const nodes = flags.nodes ?? (flags.quick ? 200 : 5000);
    const requests = flags.requests ?? (flags.quick ? 10 : 50);
    const pages = flags.pages ?? (flags.quick ? 1 : 5);
    const kubectlRuns = flags.kubectlRuns ?? (flags.quick ? 2 : 5);
    const before = machine();
    const rack = await benchRack({
      rackDir: flags.rack,
      heartbeatSeconds: 300,
    });
    ctx.onCleanup(() => rack.stop());
    await ensureScale(rack.kube, { nodes, pods: flags.pods });
    const nodeCount = await rack.kube.countAll('/api/v1/nodes');

    const logs = runLogDir('servers-list');
    log(`logs in ${logs}`);
    const backend = await startBackend(rack.dir, {
      user: flags.user,
      root: flags.backendRoot ? path.resolve(flags.backendRoot) : undefined,
      logFile: path.join(logs, 'backend.log'),
      env: flags.cpuProfile ? { NODE_OPTIONS: '--inspect=127.0.0.1:0' } : {},
    });
    ctx.onCleanup(() => backend.stop());
    const url = `${backend.baseUrl}/api/servers/clusters/${CLUSTER}/servers`;
    // The backend's start-up work first (the catalog ingests the server entities and the
    // users and groups the policy reads), then until the caches list every node. An answer
    // the route keeps giving after that (a 4xx) is the result, not a reason to stop: the
    // rest is measured all the same.
    const pid = backend.pid();
    if (!pid) throw new Error('could not find the backend process');
    const settledMs = await settle(pid);
    log(
      settledMs === undefined
        ? 'the backend was still busy after 5 min (catalog ingestion?); measuring anyway'
        : `backend settled after ${seconds(settledMs)}`,
    );
    const token = await backend.token();
    let routeError;
    // The first complete answer is built with nothing cached (ServerListCache).
    let firstMs;
    for (const t0 = Date.now(); ; ) {
      try {
        const { body, ms: took } = await timedFetch(url, token);
        if (JSON.parse(body).items.length === nodeCount) {
          firstMs = took;
          break;
        }
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

    const load = loadSampler();
    // The route, warm, one request at a time.
    const cpu0 = cpuSeconds(pid);
    const routeMs = [];
    let bytes = 0;
    let allowedActions = 0;
    let encoding;
    if (!routeError) for (let i = 0; i < 3; i++) await timedFetch(url, token);
    const profiler = flags.cpuProfile
      ? await startCpuProfile(await inspectorOf(backend.logFile, 'src/index'))
      : undefined;
    for (let i = 0; i < (routeError ? 0 : requests); i++) {
      const r = await timedFetch(url, token);
      routeMs.push(r.ms);
      bytes = r.body.length;
      encoding = r.encoding ?? 'identity';
      if (i === 0)
        allowedActions = JSON.parse(r.body).items.reduce(
          // The list holds only the actions offered and allowed (by ceremony level).
          (n, s) => n + Object.keys(s.actions ?? {}).length,
          0,
        );
    }
    const cpuPerRequest =
      ((cpuSeconds(pid) - cpu0) * 1000) / Math.max(1, routeMs.length);
    const profile = profiler
      ? formatCpuSummary(
          summariseCpuProfile(
            await profiler.stop(path.join(logs, 'backend.cpuprofile')),
            { top: 25 },
          ),
        )
      : undefined;

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
    for (let i = 0; i < kubectlRuns; i++) {
      const r = await kubectlGetNodes(rack.info.kubectl, kubeconfig);
      kubectlMs.push(r.ms);
      kubectlLines = r.lines;
    }

    // The page, in headless Chromium: one warm-up visit (signs in, fills the cache), then timed.
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
    await pageLoad(browser.context, backend.baseUrl);
    const visits = [];
    for (let i = 0; i < pages; i++)
      visits.push({
        ...(await pageLoad(browser.context, backend.baseUrl, {
          cacheDisabled: true,
        })),
        cache: 'off',
      });
    for (let i = 0; i < pages; i++)
      visits.push({
        ...(await pageLoad(browser.context, backend.baseUrl)),
        cache: 'on',
      });
    await browser.close();
    const seen = load.stop();

    const route = summary(routeMs);
    const shown = visits.filter(v => !v.error && v.cache === 'off');
    const toRow = shown.map(v => v.rowAt);
    const render = shown
      .filter(v => v.listEndMs !== undefined)
      .map(v => v.rowAt - v.listEndMs);
    const warm = visits
      .filter(v => !v.error && v.cache === 'on')
      .map(v => v.rowAt);
    console.log(
      `cluster: ${nodeCount} nodes; user:default/${
        flags.user
      }; ${allowedActions} actions offered and allowed in the answer (${(
        bytes / 1e6
      ).toFixed(1)} MB, sent ${encoding})`,
    );
    console.log(
      routeError
        ? `route GET /api/servers/clusters/${CLUSTER}/servers fails: ${routeError.message}`
        : `route GET /api/servers/clusters/${CLUSTER}/servers, ${requests} requests one at a time: p50 ${ms(
            route.p50,
          )}, p95 ${ms(route.p95)}, max ${ms(route.max)}; backend CPU ${ms(
            cpuPerRequest,
          )} a request; the first answer (no row cached) ${ms(firstMs ?? NaN)}`,
    );
    if (profile)
      console.log(
        `backend CPU profile of the timed requests (${logs}/backend.cpuprofile):\n${profile}`,
      );
    console.log(
      `kubectl get nodes (${
        kubectlLines - 1
      } rows), ${kubectlRuns} runs: p50 ${ms(
        percentile(kubectlMs, 50),
      )}, max ${ms(Math.max(...kubectlMs))}`,
    );
    for (const [i, v] of visits.entries())
      if (v.error) console.log(`page ${i + 1}: no table: ${v.error}`);
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
          )} after the answer)${v.signedIn ? ', signed in again' : ''}`,
        );
    console.log(
      `machine: ${before.cores} cores, ${before.memoryGiB} GiB, ${describeLoad(
        seen,
      )}`,
    );
    const routeFigure = routeError
      ? `route FAILS (${routeError.status})`
      : `route p95 ${ms(route.p95)}`;
    const pageFigure = shown.length
      ? `page p50 ${seconds(
          percentile(toRow, 50),
        )} from navigation to the first row, HTTP cache off (goal <= 1 s; ${ms(
          percentile(render, 50),
        )} of it after the answer; ${seconds(
          percentile(warm, 50),
        )} with the cache)`
      : 'page shows no table';
    console.log(
      `servers list at ${nodeCount} nodes: ${routeFigure} (goal <= 50 ms), ${pageFigure}, kubectl get nodes p50 ${seconds(
        percentile(kubectlMs, 50),
      )}`,
    );
    if (routeError) process.exitCode = 1;
  },
  { timeoutMinutes: 30 },
);
