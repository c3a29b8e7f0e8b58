// Browser test of a drain on the demo portal: a guest (plant-admins) drains a
// worker from /servers, reads the pre-flight, acknowledges it, submits with a
// reason and watches the row's progress reach Drained; then the cluster is
// checked with the admin kubeconfig: nothing but DaemonSet pods is left on the
// node and the NodeMaintenance is Drained. The maintenance page shows the
// timeline.
// Then the drain of the fixture's worker-5 (docs/drain.md; names in
// e2e/rack/fixture/plant-a.yaml): the dialog lists the StatefulSet pod on a
// local PersistentVolume as refused, the skip and wait-completed pods, the
// drain-order groups, the KubeVirt virtual machines with what happens to each,
// and the expected duration with its slowest pod; the node-local option asks
// again (the pod is then evicted last, its StatefulSet and budget listed) and
// is recorded on the NodeMaintenance the request creates, whose page names it
// among its drain options, with who asked.
// Its own rack (net 192) and port (7009), so it never meets the other tests.
//
//   node --test e2e/tests/servers-drain.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allowEmptyDirEviction,
  eventually,
  formatViolations,
  isDaemonSetPod,
  openServersPage,
  pickDrainableWorker,
  portalAndBrowser,
  readRow,
  runAxe,
  serverRow,
  signInIfAsked,
  waitForRow,
  waitForShopWorkloads,
} from './harness.mjs';

const SCREENSHOT =
  process.env.RACKSIDE_E2E_DRAIN_SCREENSHOT ?? '/tmp/rackside-e2e-drain.png';
const DIALOG_SCREENSHOT = SCREENSHOT.replace(/(\.png)?$/, '-dialog.png');

const env = portalAndBrowser({ offset: 2 });

test(
  'a guest drains a worker from /servers and watches it reach Drained',
  { timeout: 420_000 },
  async t => {
    // The fixture's workloads are scheduled (and Running) before we choose.
    await waitForShopWorkloads(env.portal);
    const worker = pickDrainableWorker(env.portal.kubectl);
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

    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      const row = await openServersPage(page, env.portal, NODE);
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
      const left = env.portal.podsOn(NODE).filter(p => !isDaemonSetPod(p));
      assert.deepEqual(
        left.map(p => `${p.metadata.namespace}/${p.metadata.name}`),
        [],
        `no non-DaemonSet pod left on ${NODE}`,
      );
      const maintenance = env.portal
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

/** The fixture's worker with a pod of each class of section 16 (e2e/rack/fixture/plant-a.yaml). */
const RULES_NODE = 'worker-5';
const NODE_LOCAL_OPTION = 'Also evict pods with data on this node';

const keyOf = p => `${p.metadata.namespace}/${p.metadata.name}`;
const drainRule = p =>
  p.metadata.annotations?.['rackside.dev/drain'] ??
  p.metadata.labels?.['rackside.dev/drain'];
const drainOrder = p =>
  Number(
    p.metadata.annotations?.['rackside.dev/drain-order'] ??
      p.metadata.labels?.['rackside.dev/drain-order'] ??
      0,
  );

/** The text of each list item of a pre-flight section, in order. */
const itemsOf = section =>
  section.getByRole('listitem').evaluateAll(els => els.map(e => e.innerText));

/**
 * The drain's expected seconds for these pods, computed here from the cluster:
 * the order groups one after another, each as long as its slowest grace period.
 */
function expectedSeconds(pods) {
  const groups = new Map();
  for (const p of pods) {
    const grace = p.spec.terminationGracePeriodSeconds ?? 30;
    const order = drainOrder(p);
    groups.set(order, Math.max(groups.get(order) ?? 0, grace));
  }
  return [...groups.values()].reduce((a, b) => a + b, 0);
}

test(
  'the drain dialog of worker-5 lists what the drain tells apart, and the node-local option is recorded',
  { timeout: 300_000 },
  async t => {
    await waitForShopWorkloads(env.portal);
    // The lab pods of worker-5 scheduled and Running, and its four VMIs there.
    const lab = await eventually(
      'the lab workloads running on worker-5',
      () => {
        const pods = env.portal
          .getJson('pods', '-n', 'lab')
          .items.filter(p => p.status?.phase === 'Running');
        const names = pods.map(p => p.metadata.name);
        const has = prefix => names.some(n => n.startsWith(prefix));
        return [
          'db-0',
          'frontend-',
          'archiver-',
          'local-agent-',
          'nightly-report-',
        ].every(has) && pods.every(p => p.spec.nodeName === RULES_NODE)
          ? pods
          : undefined;
      },
      { timeoutMs: 120_000 },
    );
    const find = prefix =>
      keyOf(lab.find(p => p.metadata.name.startsWith(prefix)));
    const db = 'lab/db-0';
    const archiver = find('archiver-');
    const frontend = find('frontend-');
    const agent = find('local-agent-');
    const report = find('nightly-report-');
    const vmis = env.portal
      .getJson('virtualmachineinstances.kubevirt.io', '-n', 'lab')
      .items.filter(v => v.status?.nodeName === RULES_NODE)
      .map(keyOf)
      .sort();
    assert.deepEqual(vmis, [
      'lab/vm-build',
      'lab/vm-gpu',
      'lab/vm-scratch',
      'lab/vm-web',
    ]);

    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      // Signed in already by the test before, in this browser context.
      await page.goto(`${env.portal.baseUrl}/servers`);
      const row = serverRow(page, RULES_NODE);
      await signInIfAsked(page, row);
      await row.getByRole('button', { name: `Drain ${RULES_NODE}` }).click();
      const dialog = page.getByRole('dialog');
      const preflight = dialog.getByTestId('preflight');
      await preflight.waitFor();

      // The pod on the local PersistentVolume: refused, and why.
      const local = preflight.getByTestId('preflight-node-local');
      const localItems = await itemsOf(local);
      assert.equal(localItems.length, 1, localItems.join(' | '));
      assert.match(localItems[0], /^lab\/db-0\s*refused unless allowed/);
      assert.match(
        localItems[0],
        /PersistentVolumeClaim data-db-0 is bound to local PersistentVolume lab-db-worker-5/,
      );
      assert.match(
        await preflight.getByTestId('preflight-refused').innerText(),
        /lab\/db-0/,
      );
      assert.equal(
        await preflight.getByTestId('preflight-statefulsets').count(),
        0,
        'no StatefulSet pod is evicted while db-0 is refused',
      );
      assert.equal(
        await dialog.getByTestId('preflight-ack').isDisabled(),
        true,
        'a refused pod leaves nothing to acknowledge',
      );

      // Skip and wait-completed: named, not evicted.
      const firstLines = async id =>
        (await itemsOf(preflight.getByTestId(id))).map(
          i => i.trim().split(/\s+/)[0],
        );
      assert.deepEqual(await firstLines('preflight-skipped'), [agent]);
      assert.deepEqual(await firstLines('preflight-wait-completed'), [report]);
      const evictText = await preflight
        .getByTestId('preflight-evict')
        .innerText();
      for (const pod of [db, agent, report]) {
        assert.ok(
          !evictText.includes(pod),
          `${pod} is not among the pods to evict`,
        );
      }

      // The virtual machines, each with what the drain does to it.
      const vms = preflight.getByTestId('preflight-virtual-machines');
      const vmRows = await vms
        .getByRole('listitem')
        .evaluateAll(els =>
          els.map(e => [
            e.innerText.trim().split(/\s+/)[0],
            e.getAttribute('data-action'),
          ]),
        );
      assert.deepEqual(vmRows, [
        ['lab/vm-build', 'shutdown'],
        ['lab/vm-gpu', 'blocks'],
        ['lab/vm-scratch', 'shutdown'],
        ['lab/vm-web', 'migrate'],
      ]);
      assert.match(
        await vms.innerText(),
        /1 live-migrated, 2 shut down, 1 blocks the drain/,
      );

      // Every reason is there to read in full: no list text is cut to one line.
      const clipped = await preflight
        .locator('li > div')
        .evaluateAll(els =>
          els
            .filter(e => e.scrollWidth > e.clientWidth + 1)
            .map(e => e.innerText.split('\n')[0]),
        );
      assert.deepEqual(clipped, [], 'no pre-flight list item is cut off');

      // The estimate and its slowest pod: the archiver's 1800 s.
      const estimate = preflight.getByTestId('preflight-estimate');
      assert.match(
        await preflight.getByTestId('preflight-slowest').innerText(),
        new RegExp(`Slowest pod: ${archiver} \\(grace period 30 min\\)`),
      );
      assert.ok(Number(await estimate.getAttribute('data-seconds')) >= 1830);

      // Allowed on purpose: a new pre-flight, db-0 evicted last, its StatefulSet and budget.
      const option = dialog.getByLabel(NODE_LOCAL_OPTION);
      assert.match(
        (await option.getAttribute('aria-describedby')) ?? '',
        /\S/,
        'the option is described by its warning',
      );
      assert.match(
        await dialog.getByTestId('preflight-options').innerText(),
        /Data on this node will be unavailable until the node returns/,
      );
      const before = await preflight.getAttribute('data-token');
      await option.check();
      await eventually(
        'a new pre-flight with allowNodeLocalData',
        async () => {
          if ((await preflight.getAttribute('data-token')) === before) {
            return false;
          }
          // Refused now only for another reason (an emptyDir pod), if at all.
          const refused = preflight.getByTestId('preflight-refused');
          return (
            (await refused.count()) === 0 ||
            !(await refused.innerText()).includes(db)
          );
        },
        { timeoutMs: 30_000, everyMs: 250 },
      );
      // Shop pods may share the node; an emptyDir one needs its own option.
      const onNode = env.portal
        .podsOn(RULES_NODE)
        .filter(p => !isDaemonSetPod(p));
      if (onNode.some(p => (p.spec.volumes ?? []).some(v => v.emptyDir))) {
        await allowEmptyDirEviction(dialog);
      }
      assert.equal(await preflight.getByTestId('preflight-refused').count(), 0);
      assert.match(
        (await itemsOf(local))[0],
        /^lab\/db-0\s*evicted: unavailable until the node is back/,
      );
      assert.match(
        await preflight.getByTestId('preflight-statefulsets').innerText(),
        /StatefulSet lab\/db: (no disruption budget covers these pods|budget )/,
      );
      const groups = await preflight
        .getByTestId('preflight-order')
        .getByRole('listitem')
        .evaluateAll(els => els.map(e => Number(e.getAttribute('data-order'))));
      assert.deepEqual(groups, [0, 1, 10], 'the order groups, lowest first');
      const order = await itemsOf(preflight.getByTestId('preflight-order'));
      assert.match(order[0], new RegExp(archiver));
      assert.match(
        order[1],
        new RegExp(`^2\\. Order 1: 1 pod[\\s\\S]*${frontend}`),
      );
      assert.match(order[2], /^3\. Order 10: 1 pod[\s\S]*lab\/db-0/);

      // The estimate agrees with the pods' own grace periods.
      const evictable = env.portal
        .podsOn(RULES_NODE)
        .filter(p => !isDaemonSetPod(p) && !drainRule(p));
      const seconds = Number(await estimate.getAttribute('data-seconds'));
      assert.equal(seconds, expectedSeconds(evictable));
      t.diagnostic(
        `estimate ${seconds} s over ${evictable.map(keyOf).join(', ')}`,
      );
      // Every list on screen, none of them in axe's way.
      const axe = await runAxe(page, { include: '[role="dialog"]' });
      assert.deepEqual(axe.blocking, [], formatViolations(axe.blocking));
      if (axe.other.length) t.diagnostic(formatViolations(axe.other));
      await page
        .screenshot({
          path: SCREENSHOT.replace(/(\.png)?$/, '-rules.png'),
          fullPage: true,
        })
        .catch(() => {});

      // Requested with the option: it is recorded on the maintenance.
      await dialog
        .getByTestId('action-reason')
        .fill('e2e: disk swap, TICKET-20');
      await dialog.getByLabel('I have reviewed this impact').check();
      await dialog.getByRole('button', { name: 'Drain', exact: true }).click();
      await dialog.waitFor({ state: 'detached' });
      const maintenance = await eventually(
        'the drain NodeMaintenance of worker-5',
        () =>
          env.portal
            .getJson('nodemaintenances', '-A')
            .items.find(
              m => m.spec.nodeName === RULES_NODE && m.spec.intent === 'drain',
            ),
      );
      assert.equal(maintenance.spec.drain?.allowNodeLocalData, true);
      assert.equal(maintenance.spec.reason, 'e2e: disk swap, TICKET-20');

      // The maintenance page says what was asked, and by whom.
      await page.goto(
        `${env.portal.baseUrl}/servers/maintenances/plant-a/${maintenance.metadata.name}`,
      );
      const options = page.getByRole('region', { name: 'Drain options' });
      await options.waitFor();
      const asked = await options
        .getByTestId('maintenance-drain-option')
        .evaluateAll(els =>
          els.map(e => [e.getAttribute('data-option'), e.innerText.trim()]),
        );
      const nodeLocal = asked.find(([o]) => o === 'allowNodeLocalData');
      assert.ok(
        nodeLocal,
        `the node-local option is shown: ${asked.join(' | ')}`,
      );
      assert.match(
        nodeLocal[1],
        new RegExp(
          `^Node-local data: pods with data on this node are evicted, their data unavailable until the node is back \\(asked by ${maintenance.spec.requestedBy}\\)$`,
        ),
      );
      // Nothing else was ticked but emptyDir, where a shop pod needed it.
      const others = asked
        .map(([o]) => o)
        .filter(o => o !== 'allowNodeLocalData');
      assert.deepEqual(
        others,
        maintenance.spec.drain?.deleteEmptyDirData
          ? ['deleteEmptyDirData']
          : [],
      );
      assert.match(
        await options.getByTestId('maintenance-drain-defaults').innerText(),
        /^Otherwise the default: .*pods without a controller are not evicted.*no timeout\.$/,
      );
    } finally {
      await page.close();
    }
  },
);
