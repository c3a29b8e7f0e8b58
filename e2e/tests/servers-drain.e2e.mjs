// Browser test of a drain on the demo portal: a guest (plant-admins) drains a
// worker from /servers, reads the pre-flight, acknowledges it, submits with a
// reason and watches the row's progress reach Drained; then the cluster is
// checked with the admin kubeconfig: nothing but DaemonSet pods is left on the
// node and the NodeMaintenance is Drained. The maintenance page shows the
// timeline.
// Its own rack (net 192) and port (7009), so it never meets the other tests.
//
//   node --test e2e/tests/servers-drain.e2e.mjs
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allowEmptyDirEviction,
  isDaemonSetPod,
  launchBrowser,
  openServersPage,
  pickDrainableWorker,
  readRow,
  startPortal,
  waitForRow,
  waitForShopWorkloads,
} from './harness.mjs';

const SCREENSHOT =
  process.env.RACKSIDE_E2E_DRAIN_SCREENSHOT ?? '/tmp/rackside-e2e-drain.png';
const DIALOG_SCREENSHOT = SCREENSHOT.replace(/(\.png)?$/, '-dialog.png');

let portal;
let context;
let chrome;

before(
  async () => {
    portal = await startPortal({ offset: 2 });
    chrome = await launchBrowser();
    context = chrome.context;
  },
  { timeout: 600_000 },
);

after(async () => {
  await chrome?.close();
  await portal?.stop();
});

test(
  'a guest drains a worker from /servers and watches it reach Drained',
  { timeout: 420_000 },
  async t => {
    // The fixture's workloads are scheduled (and Running) before we choose.
    await waitForShopWorkloads(portal);
    const worker = pickDrainableWorker(portal.kubectl);
    assert.ok(worker, 'a worker without payments or unmanaged pods exists');
    const NODE = worker.name;
    const toEvict = worker.evictable.map(
      p => `${p.metadata.namespace}/${p.metadata.name}`,
    );
    t.diagnostic(
      `draining ${NODE}: ${toEvict.join(', ')}${
        worker.emptyDir ? ' (emptyDir pod: the option is needed)' : ''
      }`,
    );

    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    try {
      const row = await openServersPage(page, portal, NODE);
      await row.getByRole('button', { name: `Drain ${NODE}` }).click();

      const dialog = page.getByRole('dialog');
      const preflight = dialog.getByTestId('preflight');
      await preflight.waitFor();

      // The pre-flight, as a person reads it.
      const evict = preflight.getByTestId('preflight-evict');
      for (const pod of toEvict) {
        await evict.getByText(pod, { exact: true }).waitFor();
      }
      assert.match(
        await evict.innerText(),
        new RegExp(`Pods to evict \\(${toEvict.length}\\)`),
      );
      assert.match(
        await preflight.getByTestId('preflight-daemonset').innerText(),
        /monitoring\/node-exporter-/,
        'the DaemonSet pod is listed as left in place',
      );
      assert.match(
        await preflight.getByTestId('preflight-quorum').innerText(),
        /\S/,
        'the quorum effect is stated',
      );

      if (worker.emptyDir) await allowEmptyDirEviction(dialog);

      const submit = dialog.getByRole('button', { name: 'Drain', exact: true });
      await dialog
        .getByTestId('action-reason')
        .fill('e2e: kernel update, TICKET-6');
      assert.equal(
        await submit.isDisabled(),
        true,
        'no drain before the impact is acknowledged',
      );
      await dialog.getByLabel('I have reviewed this impact').check();
      await page
        .screenshot({ path: DIALOG_SCREENSHOT, fullPage: true })
        .catch(() => {});
      await submit.click();
      await dialog.waitFor({ state: 'detached' });

      // Watch the row: Draining n of N, then Drained.
      const seen = new Set();
      await waitForRow(
        row,
        'the row reaches Drained',
        r => {
          seen.add(r.maintenance.split('\n')[0]);
          return r.phase === 'Drained';
        },
        { timeoutMs: 180_000, everyMs: 250 },
      );
      t.diagnostic(`the row showed: ${[...seen].join(' | ')}`);
      assert.equal(
        (await row.getByTestId('maintenance-phase').innerText()).trim(),
        'Drained',
      );
      assert.equal((await readRow(row)).schedulable, 'Cordoned');

      // The cluster agrees: only DaemonSet pods are left, and it is Drained.
      const left = portal.podsOn(NODE).filter(p => !isDaemonSetPod(p));
      assert.deepEqual(
        left.map(p => `${p.metadata.namespace}/${p.metadata.name}`),
        [],
        `no non-DaemonSet pod left on ${NODE}`,
      );
      const maintenance = portal
        .getJson('nodemaintenances', '-A')
        .items.find(m => m.spec.nodeName === NODE && m.spec.intent === 'drain');
      assert.ok(maintenance, `a drain NodeMaintenance of ${NODE}`);
      assert.equal(maintenance.status?.phase, 'Drained');
      assert.equal(maintenance.spec.reason, 'e2e: kernel update, TICKET-6');
      assert.equal(maintenance.status?.drain?.total, toEvict.length);
      assert.equal(maintenance.status?.drain?.evicted, toEvict.length);

      // The row links to the maintenance page, whose timeline ends at Drained.
      await row.getByRole('link', { name: 'Drained' }).click();
      await page.getByTestId('rackside-maintenance-page').waitFor();
      await page
        .getByTestId('maintenance-phase-chip')
        .getByText('Drained')
        .waitFor();
      const phases = await page
        .getByTestId('timeline-entry')
        .evaluateAll(els => els.map(e => e.getAttribute('data-phase')));
      assert.deepEqual(phases.filter(Boolean), [
        'Requested',
        'Cordoned',
        'Draining',
        'Drained',
      ]);
      assert.match(
        await page.getByTestId('maintenance-who').innerText(),
        /e2e: kernel update, TICKET-6/,
      );
    } finally {
      await page
        .screenshot({ path: SCREENSHOT, fullPage: true })
        .catch(() => {});
      await page.close();
    }
  },
);
