// docs/install.md as the test: a portal made by @backstage/create-app (pinned,
// cached: e2e/portal/portal.mjs), untouched, gets the release by running the
// guide's steps word for word (e2e/portal/install-guide.mjs): the release
// tarballs (dist/release, from scripts/release.sh) are published to a Verdaccio
// the test starts (e2e/lib/registries.mjs) and the guide's registry blocks add
// them from there. The portal must end with one copy of each framework package
// (FRAMEWORK_PACKAGES, from its yarn.lock, as `yarn why` reads it); it is then
// type-checked and built, and started against a simulated rack
// (e2e/tests/harness.mjs) where the operator comes as section 8 installs it: the
// release's chart and image (dist/rackside-operator-<v>.oci.tar, scripts/image.sh)
// are published to a Distribution registry the test starts, the guide's `sh
// cluster` blocks run word for word (helm install from that registry, helm test,
// the portal's token and CA), and the operator's pod runs in podman from the image
// pulled by the digest the chart's values name (e2e/rack/lib/podRunner.mjs: kwok
// runs no container, so the test plays kubelet and kube-proxy for the operator and
// the helm test hooks); the portal's backend reaches the cluster with the token
// that block wrote. The image is pulled once for both apps (one podman storage).
// The test's own config holds only where the
// portal listens, the rack's cluster and which app is served (ENVIRONMENT_KEYS);
// who may use Rackside is the guide's first permission block. In a
// headless Chromium the guest then signs in, sees the servers, cordons a worker
// and returns it to service from the Servers page, opens the worker's catalog
// entity on its Server tab and finds the "complete" notification; first in
// create-app's app (new frontend system), then in its legacy app
// (packages/app-legacy, served by the same backend with app.packageName).
// Breaking a marked snippet of the guide fails it.
//
//   node --test e2e/portal/install-guide.e2e.mjs
//   RACKSIDE_RELEASE_DIR=DIR   the release to install (default dist/release; packed when empty)
//   RACKSIDE_E2E_SOURCE=air-gapped   the guide's tarball appendix instead of the registry
//   RACKSIDE_E2E_KEEP=1        keep the rack's logs
import assert from 'node:assert/strict';
import { execFileSync, spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, test } from 'node:test';
import {
  actWithReason,
  apiAsSignedInUser,
  claimRackNet,
  eventually,
  launchBrowser,
  ROOT,
  serverRow,
  signInIfAsked,
  startPortal,
  tableOverflow,
  waitForRow,
} from '../tests/harness.mjs';
import {
  chartWithImage,
  publishRelease,
  pushChart,
  pushImage,
  startNpmRegistry,
  startOciRegistry,
} from '../lib/registries.mjs';
import { binaries, connectRack } from '../rack/rack.mjs';
import { helm, helmBinary } from '../rack/lib/chart.mjs';
import {
  createPodRunner,
  freePort,
  serviceProxy,
} from '../rack/lib/podRunner.mjs';
import {
  applyClusterSteps,
  applyInstallGuide,
  frameworkCopies,
  stepsInConfig,
} from './install-guide.mjs';
import { basePortal, resetPortal } from './portal.mjs';

const RELEASE =
  process.env.RACKSIDE_RELEASE_DIR ?? path.join(ROOT, 'dist/release');
const VERSION = JSON.parse(
  fs.readFileSync(path.join(ROOT, 'plugins/servers/package.json'), 'utf8'),
).version;
const NODE = 'worker-3';
const PORT = Number(process.env.RACKSIDE_E2E_PORTAL_PORT ?? 7040);
const SOURCE = process.env.RACKSIDE_E2E_SOURCE ?? 'registry';
const DOC = path.join(ROOT, 'docs/install.md');
const NS = 'rackside-system';
const IMAGE_ARCHIVE = path.join(
  ROOT,
  'dist',
  `rackside-operator-${VERSION}.oci.tar`,
);

const log = msg => process.stderr.write(`install-guide: ${msg}\n`);
const seconds = since => `${((performance.now() - since) / 1000).toFixed(0)} s`;

function yarn(dir, ...args) {
  execFileSync('yarn', args, {
    cwd: dir,
    stdio: ['ignore', 'inherit', 'inherit'],
    env: { ...process.env, CI: '', YARN_ENABLE_IMMUTABLE_INSTALLS: 'false' },
  });
}

/** The release's tarballs, packed from the current build when there are none. */
function ensureRelease() {
  const have = fs.existsSync(path.join(RELEASE, 'SHA256SUMS'));
  if (have) return;
  log(
    `no release in ${RELEASE}: packing one (scripts/release.sh --no-version)`,
  );
  execFileSync(path.join(ROOT, 'scripts/release.sh'), ['--no-version'], {
    stdio: ['ignore', 'ignore', 'inherit'],
    env: { ...process.env, RACKSIDE_RELEASE_DIR: RELEASE },
  });
}

/** The operator image archive of this version, made by scripts/image.sh when missing. */
function ensureImage() {
  if (fs.existsSync(IMAGE_ARCHIVE)) return;
  log(`no ${IMAGE_ARCHIVE}: building it (scripts/image.sh)`);
  execFileSync(path.join(ROOT, 'scripts/image.sh'), [], {
    stdio: ['ignore', 'ignore', 'inherit'],
  });
}

let portalDir;
let lock;
let npmRegistry;
let ociRegistry;
/** What the test published to ociRegistry: {image: {repository, digest, ref}, chart}. */
let release;
/** One podman storage for both apps' racks: the image is pulled into it once. */
let podDir;
let imagePulled;
/** The one rack both apps' portals use, the chart installed in it once. */
let rack;
const timings = {};

before(
  async () => {
    const t0 = performance.now();
    ensureRelease();
    portalDir = basePortal();
    timings.scaffold = seconds(t0);
    lock = path.join(path.dirname(portalDir), 'in-use');
    try {
      fs.writeFileSync(lock, String(process.pid), { flag: 'wx' });
    } catch {
      const owner = Number(fs.readFileSync(lock, 'utf8'));
      try {
        process.kill(owner, 0);
        throw new Error(
          `the cached portal ${portalDir} is in use by process ${owner}`,
        );
      } catch (error) {
        if (error.code !== 'ESRCH') throw error;
        fs.writeFileSync(lock, String(process.pid));
      }
    }
    resetPortal(portalDir);

    const env = { RACKSIDE_RELEASE: RELEASE, RACKSIDE_VERSION: VERSION };
    const tOci = performance.now();
    ensureImage();
    ociRegistry = await startOciRegistry();
    if (SOURCE === 'registry') {
      const t = performance.now();
      npmRegistry = await startNpmRegistry();
      // As scripts/release.sh --publish: the packages, the image, then the chart
      // whose values name the image by its digest.
      release = publishRelease({
        npm: npmRegistry,
        oci: ociRegistry,
        version: VERSION,
        releaseDir: RELEASE,
        imageArchive: IMAGE_ARCHIVE,
      });
      const published = release.packages;
      log(`published to ${npmRegistry.url}: ${published.join(', ')}`);
      env.RACKSIDE_NPM_REGISTRY = npmRegistry.url;
      // The test's registry is plain HTTP on loopback, which Yarn refuses
      // unless told; a site's own registry is HTTPS and needs no such line.
      env.YARN_UNSAFE_HTTP_WHITELIST = new URL(npmRegistry.url).hostname;
      timings.registry = seconds(t);
    } else {
      // The packages come as files; the chart and the image still from the registry.
      const image = pushImage(ociRegistry, IMAGE_ARCHIVE);
      const chartFile = chartWithImage(
        path.join(RELEASE, `rackside-${VERSION}.tgz`),
        image,
        fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-chart-')),
      );
      release = { image, chart: pushChart(ociRegistry, chartFile) };
    }
    log(
      `published ${release.image.ref} and ${release.chart} to ${ociRegistry.url}`,
    );
    // The image into the test's podman while the portal is built: the operator's
    // pods of both apps' racks start from it (a kubelet pulls by the pod's digest;
    // the same reference here, so that pull finds it).
    podDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-portal-pods-'));
    const tPull = performance.now();
    imagePulled = createPodRunner({
      dir: podDir,
      pull: { tlsVerify: false },
    })
      .then(runner => runner.pull(release.image.ref))
      .then(() => (timings['image pull'] = seconds(tPull)));
    imagePulled.catch(() => {});
    timings.oci = seconds(tOci);

    const t1 = performance.now();
    const { counts, ran } = applyInstallGuide(portalDir, {
      doc: DOC,
      source: SOURCE,
      env,
      log,
    });
    timings.guide = seconds(t1);
    log(`blocks run: ${JSON.stringify(counts)} (${ran.join(', ')})`);
    // A guide whose marks were lost would run nothing and pass: it must not.
    assert.equal(
      counts['sh install'],
      SOURCE === 'registry' ? 4 : 3,
      'sh install blocks',
    );
    assert.equal(counts['ts backend'], 1, 'ts backend block');
    assert.equal(counts['tsx app'], 1, 'tsx app block');
    assert.equal(counts['tsx legacy-app'], 3, 'tsx legacy-app blocks');
    assert.equal(counts['yaml app-config'], 3, 'yaml app-config blocks');

    // One copy of each framework package, after the guide and nothing else.
    const lockText = fs.readFileSync(path.join(portalDir, 'yarn.lock'), 'utf8');
    assert.deepEqual(
      frameworkCopies(lockText),
      {},
      'framework packages the portal holds twice (version: who asks for it)',
    );
    // The six packages came the way the guide's source says: this release's
    // version from the registry, or the tarballs.
    const rackside = [
      ...lockText.matchAll(/^ {2}resolution: "(@rackside\/[^@]+)@(.*)"$/gm),
    ].map(([, name, how]) => `${name}@${how.replace(/#.*$/, '')}`);
    assert.equal(rackside.length, 6, rackside.join(', '));
    for (const resolved of rackside) {
      if (SOURCE === 'registry') {
        assert.match(resolved, new RegExp(`@npm:${VERSION}$`), resolved);
      } else assert.match(resolved, /@file:.*\.tgz$/, resolved);
    }

    const t2 = performance.now();
    log('type-checking the portal (yarn tsc)');
    yarn(portalDir, 'tsc');
    timings.tsc = seconds(t2);
    const t3 = performance.now();
    log('building the apps (yarn workspace app build, app-legacy build)');
    yarn(portalDir, 'workspace', 'app', 'build');
    yarn(portalDir, 'workspace', 'app-legacy', 'build');
    timings.build = seconds(t3);

    // One rack for both apps, the operator installed in it as section 8 says.
    const t4 = performance.now();
    await imagePulled;
    timings['waiting for the image'] = seconds(t4);
    const t5 = performance.now();
    const netLock = claimRackNet();
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-portal-rack-'));
    rack = { dir, netLock, rackDir: path.join(dir, 'rack') };
    log(`starting the simulated rack in ${rack.rackDir} (net ${netLock.net})`);
    execFileSync(
      process.execPath,
      [
        path.join(ROOT, 'e2e/rack/rack.mjs'),
        'up',
        '--detach',
        '--dir',
        rack.rackDir,
        '--net',
        String(netLock.net),
      ],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    rack.up = true;
    const logs = path.join(dir, 'logs');
    fs.mkdirSync(logs);
    rack.operator = await installChart({
      rackDir: rack.rackDir,
      net: netLock.net,
      kubeconfig: path.join(rack.rackDir, 'kubeconfig'),
      logs,
    });
    timings.rack = seconds(t5);
  },
  { timeout: 3_600_000 },
);

after(async () => {
  log(`timings: ${JSON.stringify(timings)}`);
  await imagePulled?.catch(() => {});
  await rack?.operator?.stop();
  if (rack?.up)
    execFileSync(
      process.execPath,
      [path.join(ROOT, 'e2e/rack/rack.mjs'), 'down', '--dir', rack.rackDir],
      { stdio: 'ignore' },
    );
  rack?.netLock.release();
  if (rack && process.env.RACKSIDE_E2E_KEEP !== '1')
    fs.rmSync(rack.dir, { recursive: true, force: true });
  else if (rack) log(`kept ${rack.dir}`);
  await npmRegistry?.stop();
  await ociRegistry?.stop();
  if (podDir) fs.rmSync(podDir, { recursive: true, force: true });
  if (lock) fs.rmSync(lock, { force: true });
});

/**
 * The test's own config on top of the portal's app-config.yaml (create-app's
 * with the guide's blocks merged in): which of its two apps the backend
 * serves. The harness adds where it listens and the rack's cluster. Nothing
 * here may be a step the guide lacks (stepsInConfig).
 */
function testConfig(dir, app) {
  const config = app === 'app' ? {} : { app: { packageName: app } };
  assert.deepEqual(
    stepsInConfig(config),
    [],
    "the test's config: environment only",
  );
  const file = path.join(dir, `app-config.test-${app}.yaml`);
  fs.writeFileSync(file, `${JSON.stringify(config)}\n`);
  return file;
}

/**
 * Section 8 on a rack (the harness's installOperator): the guide's `sh cluster`
 * blocks run word for word against it, the chart coming from the test's registry,
 * while the test plays the kubelet kwok is not: the operator's first pod runs in
 * podman from its image, pulled by the pod's own reference, behind its metrics
 * Service (kube-proxy's part: `serviceProxy`), and each `helm test` hook pod runs
 * to its end. Fails unless the operator runs the image the chart's values name by
 * digest. Answers the test's cluster entry (the token and CA the guide wrote) and
 * stop().
 */
async function installChart({ rackDir, net, kubeconfig, logs }) {
  const rack = connectRack(rackDir);
  const secrets = path.join(logs, 'secrets');
  const helmHome = path.join(logs, 'helm');
  await imagePulled;
  const runner = await createPodRunner({
    dir: podDir,
    rack,
    pull: { tlsVerify: false },
  });
  const kubectl = (...args) =>
    execFileSync(binaries().kubectl, ['--kubeconfig', kubeconfig, ...args], {
      encoding: 'utf8',
    });
  const getJson = (...args) =>
    JSON.parse(kubectl('get', ...args, '-o', 'json'));
  let operator;
  let proxy;
  const hooks = new Map(); // pod name -> {code, output}
  const serviceAddress = `127.${net}.254.81`;
  let done = false;
  const kubelet = (async () => {
    while (!done) {
      const pods = getJson('pods', '-n', NS).items.filter(
        p => p.status.phase === 'Running',
      );
      const component = p => p.metadata.labels?.['app.kubernetes.io/component'];
      const operatorPod = pods.find(p => component(p) === 'operator');
      if (!operator && operatorPod) {
        const probePort = await freePort();
        const webhookPort = await freePort();
        operator = await runner.start(operatorPod, {
          args: args =>
            args.map(a =>
              a.startsWith('--probe-port=')
                ? `--probe-port=${probePort}`
                : a.startsWith('--webhook-port=')
                ? `--webhook-port=${webhookPort}`
                : a,
            ),
        });
        operator.pod = operatorPod;
        const service = getJson(
          'service',
          '-n',
          NS,
          'rackside-operator-metrics',
        );
        proxy = await serviceProxy({
          address: serviceAddress,
          port: service.spec.ports[0].port,
          target: probePort,
        });
      }
      for (const pod of pods.filter(p => component(p) === 'test')) {
        if (hooks.has(pod.metadata.name)) continue;
        hooks.set(pod.metadata.name, null);
        const result = await runner.runToCompletion(pod, {
          hosts: { [`rackside-operator-metrics.${NS}.svc`]: serviceAddress },
        });
        hooks.set(pod.metadata.name, result);
        fs.writeFileSync(
          path.join(logs, `${pod.metadata.name}.log`),
          result.output,
        );
      }
      await new Promise(r => setTimeout(r, 250));
    }
  })();
  const stop = async () => {
    done = true;
    await kubelet.catch(() => {});
    if (operator)
      fs.writeFileSync(path.join(logs, 'operator.log'), operator.logs());
    await proxy?.close();
    await operator?.stop();
    await runner.stop();
    rack.kube.close?.();
  };
  try {
    const t = performance.now();
    const ran = await applyClusterSteps(portalDir, {
      doc: DOC,
      log,
      env: {
        PATH: [
          path.dirname(helmBinary()),
          path.dirname(binaries().kubectl),
          process.env.PATH,
        ].join(':'),
        KUBECONFIG: kubeconfig,
        HELM_CACHE_HOME: path.join(helmHome, 'cache'),
        HELM_CONFIG_HOME: path.join(helmHome, 'config'),
        HELM_DATA_HOME: path.join(helmHome, 'data'),
        // The guide's variables: the chart in the test's registry (plain HTTP),
        // the release's version, where the portal's token and CA go.
        RACKSIDE_CHART: release.chart,
        RACKSIDE_VERSION: VERSION,
        RACKSIDE_PLAIN_HTTP: '1',
        RACKSIDE_SECRETS: secrets,
      },
      // The kubelet plays on while a block (rollout status, helm test) waits.
      shell: (script, opts) =>
        Promise.race([
          runShell(script, opts),
          kubelet.then(() => {
            throw new Error('the kubelet loop ended');
          }),
        ]),
    });
    timings['chart install'] = seconds(t);
    assert.equal(ran.length, 2, `sh cluster blocks: ${ran.join(', ')}`);
    assert.ok(operator, 'the operator pod ran');
    assert.deepEqual(
      [...hooks.keys()].sort(),
      ['rackside-test-backstage', 'rackside-test-ready'],
      'helm test ran both hooks',
    );
    for (const [name, result] of hooks)
      assert.equal(result?.code, 0, `${name}: ${result?.output}`);

    // The operator runs the image the chart's values name, by digest.
    const values = JSON.parse(
      helm([
        'get',
        'values',
        'rackside',
        '-n',
        NS,
        '--all',
        '-o',
        'json',
        '--kubeconfig',
        kubeconfig,
      ]),
    );
    assert.equal(
      values.image.digest,
      release.image.digest,
      "the chart's image.digest is the published image's",
    );
    const named = `${values.image.repository}@${values.image.digest}`;
    assert.equal(
      operator.pod.spec.containers[0].image,
      named,
      "the operator pod's image",
    );
    assert.equal(
      operator.imageDigest(),
      values.image.digest,
      "the running container's image digest",
    );

    const config = path.join(logs, 'app-config.cluster.yaml');
    fs.writeFileSync(
      config,
      `${JSON.stringify({
        servers: {
          clusters: [
            {
              name: 'plant-a',
              title: 'Plant A (simulated rack, chart-installed)',
              url: rack.server,
              caFile: path.join(secrets, 'plant-a-ca.crt'),
              serviceAccountTokenFile: path.join(secrets, 'plant-a-token'),
              operatorNamespace: NS,
            },
          ],
        },
      })}\n`,
    );
    for (const file of ['plant-a-ca.crt', 'plant-a-token'])
      assert.ok(fs.statSync(path.join(secrets, file)).size > 0, file);
    done = true;
    await kubelet;
    return { configs: [config], stop };
  } catch (error) {
    await stop();
    throw error;
  }
}

function runShell(script, { dir, env }) {
  return new Promise((resolve, reject) => {
    const child = spawn('bash', ['-euo', 'pipefail', '-c', script], {
      cwd: dir,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, ...env },
    });
    child.on('error', reject);
    child.on('exit', code =>
      code === 0 ? resolve() : reject(new Error(`bash exited with ${code}`)),
    );
  });
}

/**
 * Starts the portal's backend on the test's rack (with the chart-installed
 * operator), serving the app package `app`.
 */
async function portalServing(app, offsetPort) {
  const portal = await startPortal({
    net: rack.netLock.net,
    rackDir: rack.rackDir,
    port: offsetPort,
    installOperator: async () => ({ configs: rack.operator.configs }),
    backendDir: path.join(portalDir, 'packages/backend'),
    baseConfigs: [
      path.join(portalDir, 'app-config.yaml'),
      testConfig(portalDir, app),
    ],
  });
  return {
    portal,
    async stop() {
      await portal.stop();
    },
  };
}

const unschedulable = portal =>
  portal
    .kubectl('get', 'node', NODE, '-o', 'jsonpath={.spec.unschedulable}')
    .trim();

/** The flow of the guide's "check it works", in a browser, in one app. */
async function browserFlow({ portal, chrome, label }) {
  const page = await chrome.context.newPage();
  page.setDefaultTimeout(30_000);
  try {
    const health = await fetch(`${portal.baseUrl}/api/servers/health`);
    assert.equal(
      health.status,
      200,
      'the health route answers without sign-in',
    );

    await page.goto(`${portal.baseUrl}/servers`);
    const row = serverRow(page, NODE);
    await signInIfAsked(page, row);
    await row.waitFor({ timeout: 90_000 });
    const rows = await page.locator('[data-testid="server-row"]').count();
    assert.ok(rows >= 9, `the rack's servers listed (${rows} rows)`);

    // The table fits its card, every header readable (the selection column's
    // "Select" was cut to "Se" at 1,600 and 1,920 px in this portal).
    await page.getByRole('columnheader', { name: 'Select' }).first().waitFor();
    for (const width of [1280, 1600, 1920]) {
      await page.setViewportSize({ width, height: 900 });
      await page.evaluate(
        () =>
          new Promise(r =>
            requestAnimationFrame(() => requestAnimationFrame(r)),
          ),
      );
      assert.deepEqual(await tableOverflow(page), [], `at ${width} px`);
    }

    assert.equal(unschedulable(portal), '', `${NODE} starts schedulable`);
    await actWithReason(page, row, {
      action: 'Cordon',
      node: NODE,
      reason: `install guide (${label}): firmware check, TICKET-36`,
    });
    await waitForRow(
      row,
      'Cordoned in the row',
      r => /Cordoned/.test(r.maintenance),
      {
        timeoutMs: 60_000,
      },
    );
    await eventually(
      `${NODE} unschedulable in the cluster`,
      () => unschedulable(portal) === 'true',
    );
    await actWithReason(page, row, {
      action: 'Return to service',
      node: NODE,
      reason: `install guide (${label}): check done, TICKET-36`,
    });
    await waitForRow(
      row,
      'Schedulable again in the row',
      r => r.schedulable === 'Schedulable',
      {
        timeoutMs: 90_000,
      },
    );
    assert.equal(unschedulable(portal), '', `${NODE} schedulable again`);

    // The requester's notification that the maintenance is complete.
    await eventually(
      'the "complete" notification',
      async () => {
        const res = await apiAsSignedInUser(
          page,
          'GET',
          '/api/notifications/notifications?limit=50',
        );
        return (
          res.status === 200 &&
          JSON.parse(res.body).notifications.some(
            n =>
              n.payload.title.includes(NODE) &&
              /complete/i.test(n.payload.title),
          )
        );
      },
      { timeoutMs: 60_000, everyMs: 1000 },
    );
    await page.goto(`${portal.baseUrl}/notifications`);
    await signInIfAsked(page, page.getByText(NODE).first());
    await page
      .getByText(new RegExp(`${NODE}.*complete|complete.*${NODE}`, 'i'))
      .first()
      .waitFor({
        timeout: 60_000,
      });

    // The worker's catalog entity, on its Server tab.
    await eventually(
      `the catalog entity of ${NODE} with its Server tab`,
      async () => {
        await page.goto(
          `${portal.baseUrl}/catalog/default/resource/plant-a--${NODE}/server`,
        );
        const state = page.getByTestId('entity-server-state');
        await signInIfAsked(page, state);
        await state.waitFor({ timeout: 20_000 });
        return /Schedulable/.test(await state.innerText());
      },
      { timeoutMs: 120_000, everyMs: 2000, retryErrors: true },
    );
    assert.ok(
      await page
        .getByRole('tab', { name: 'Server', exact: true })
        .or(page.getByRole('link', { name: 'Server', exact: true }))
        .first()
        .isVisible(),
      'the Server tab is on the entity page',
    );
  } finally {
    await page
      .screenshot({
        path: `/tmp/rackside-e2e-install-guide-${label}.png`,
        fullPage: true,
      })
      .catch(() => {});
    await page.close();
  }
}

describe('docs/install.md in a portal made by create-app', () => {
  for (const [app, label, port] of [
    ['app', 'new-frontend-system', PORT],
    ['app-legacy', 'legacy-frontend-system', PORT + 1],
  ]) {
    test(
      `${label}: sign in, servers, cordon and return ${NODE}, notification, Server tab`,
      { timeout: 900_000 },
      async () => {
        const t0 = performance.now();
        const { portal, stop } = await portalServing(app, port);
        const chrome = await launchBrowser();
        try {
          timings[`${label} start`] = seconds(t0);
          const t1 = performance.now();
          await browserFlow({ portal, chrome, label });
          timings[`${label} browser`] = seconds(t1);
        } finally {
          await chrome.close();
          await stop();
        }
      },
    );
  }
});
