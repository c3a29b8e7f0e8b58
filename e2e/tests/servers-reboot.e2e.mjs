// Browser test of a reboot on the demo portal: a guest (plant-admins) picks a
// worker with a BMC and no pod that blocks a drain, opens Reboot on /servers,
// reads the pre-flight, acknowledges it, types the node name, gives a reason,
// submits, and watches the row go Rebooting and come back in service. Then the
// cluster is checked with the admin kubeconfig: the node has a new boot ID,
// the NodeMaintenance ended Complete with exactly one reboot sent over
// redfish, and the machine saw exactly one power cycle. The maintenance page
// shows the power record and the timeline.
// Its own rack (net 195) and port (7012), so it never meets the other tests.
//
//   node --test e2e/tests/servers-reboot.e2e.mjs
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  allowEmptyDirEviction,
  eventually,
  launchBrowser,
  openServersPage,
  pickDrainableWorker,
  readRow,
  signInIfAsked,
  startPortal,
  waitForRow,
  waitForShopWorkloads,
} from './harness.mjs';

const SCREENSHOT =
  process.env.RACKSIDE_E2E_REBOOT_SCREENSHOT ?? '/tmp/rackside-e2e-reboot.png';
const DIALOG_SCREENSHOT = SCREENSHOT.replace(/(\.png)?$/, '-dialog.png');
const REASON = 'e2e: firmware update, TICKET-7';

let portal;
let context;
let chrome;

before(
  async () => {
    portal = await startPortal({ offset: 5 });
    chrome = await launchBrowser();
    context = chrome.context;
  },
  { timeout: 600_000 },
);

after(async () => {
  await chrome?.close();
  await portal?.stop();
});

const getJson = (...args) => portal.getJson(...args);

const rackInfo = () =>
  JSON.parse(fs.readFileSync(path.join(portal.rackDir, 'rack.json'), 'utf8'));

/** What the machine behind a node received, as the Talos emulator counts it. */
async function machineCounts(uuid) {
  const res = await fetch(`${rackInfo().talos.controlUrl}/counts`);
  assert.equal(res.status, 200, 'the Talos emulator answers /counts');
  const all = await res.json();
  return { reboot: 0, powerOff: 0, powerOn: 0, ...all[uuid] };
}

const isReady = node =>
  (node.status?.conditions ?? []).some(
    c => c.type === 'Ready' && c.status === 'True',
  );

test(
  'a guest reboots a worker through the typed-name dialog and watches it come back',
  { timeout: 480_000 },
  async t => {
    // The operator has read the demo's PowerProvider and advertises reboot.
    await eventually(
      'the redfish PowerProvider advertises reboot',
      () => {
        const pp = getJson('powerproviders', 'default');
        return (
          pp.spec.type === 'redfish' &&
          pp.status?.observedGeneration === pp.metadata.generation &&
          pp.status?.reboot === true
        );
      },
      { timeoutMs: 120_000 },
    );
    // The fixture's workloads are scheduled (and Running) before we choose.
    await waitForShopWorkloads(portal);
    const withBmc = getJson('serverbmcs').items.map(b => b.metadata.name);
    const worker = pickDrainableWorker(portal.kubectl, {
      among: withBmc,
      needPods: false,
    });
    assert.ok(
      worker,
      `a worker with a ServerBMC (${withBmc.join(
        ', ',
      )}) and no payments or unmanaged pod exists`,
    );
    const NODE = worker.name;
    const toEvict = worker.evictable.map(
      p => `${p.metadata.namespace}/${p.metadata.name}`,
    );
    const machine = rackInfo().machines.find(m => m.node === NODE);
    assert.ok(machine?.bmc, `${NODE}'s machine has a BMC in the fixture`);
    const bootIdBefore = getJson('node', NODE).status.nodeInfo.bootID;
    assert.ok(bootIdBefore, `${NODE} reports a boot ID`);
    const countsBefore = await machineCounts(machine.uuid);
    t.diagnostic(
      `rebooting ${NODE} (boot ID ${bootIdBefore}); pods to evict: ${
        toEvict.join(', ') || 'none'
      }`,
    );

    const page = await context.newPage();
    page.setDefaultTimeout(30_000);
    try {
      const row = await openServersPage(page, portal, NODE);
      // The backend's caches may read the PowerProvider's advertisement after
      // the page's first load: ask again until the row offers Reboot.
      const rebootButton = row.getByRole('button', { name: `Reboot ${NODE}` });
      await eventually(
        `the row of ${NODE} offers Reboot`,
        async () => {
          if (await rebootButton.isVisible()) return true;
          await page.reload();
          await signInIfAsked(page, row);
          await row.waitFor({ timeout: 60_000 });
          return false;
        },
        { timeoutMs: 90_000, everyMs: 2000 },
      );
      await rebootButton.click();

      const dialog = page.getByRole('dialog');
      const preflight = dialog.getByTestId('preflight');
      await preflight.waitFor();
      assert.match(
        await dialog.getByRole('heading', { level: 2 }).innerText(),
        new RegExp(`Reboot: ${NODE}`),
      );
      assert.equal(
        await dialog.getByTitle('warning').count(),
        0,
        'a worker reboot is not a hazard',
      );

      // An emptyDir pod is refused until the option allows its eviction.
      if (worker.emptyDir) await allowEmptyDirEviction(dialog);

      // The pre-flight, as a person reads it.
      const evict = preflight.getByTestId('preflight-evict');
      assert.match(
        await evict.innerText(),
        new RegExp(`Pods to evict \\(${toEvict.length}\\)`),
      );
      for (const pod of toEvict) {
        await evict.getByText(pod, { exact: true }).waitFor();
      }
      assert.match(
        await preflight.getByTestId('preflight-quorum').innerText(),
        /\S/,
        'the quorum effect is stated',
      );

      const submit = dialog.getByRole('button', {
        name: 'Reboot',
        exact: true,
      });
      await dialog.getByTestId('action-reason').fill(REASON);
      assert.equal(
        await submit.isDisabled(),
        true,
        'no reboot before the impact is acknowledged',
      );
      await dialog.getByLabel('I have reviewed this impact').check();
      assert.equal(
        await submit.isDisabled(),
        true,
        'no reboot before the node name is typed',
      );
      const typedName = dialog.getByLabel(`Type ${NODE} to confirm`);
      await typedName.fill(`${NODE}x`);
      assert.equal(
        await submit.isDisabled(),
        true,
        'no reboot with a typed name that is not the node',
      );
      await dialog
        .getByText(`That is not ${NODE}: type the node name exactly.`)
        .waitFor();
      await typedName.fill(NODE);
      assert.equal(await submit.isDisabled(), false, 'all three are given');
      await page
        .screenshot({ path: DIALOG_SCREENSHOT, fullPage: true })
        .catch(() => {});
      await submit.click();
      await dialog.waitFor({ state: 'detached' });

      // Watch the row: draining, Rebooting, then back in service.
      const seen = [];
      let rebootingText;
      await waitForRow(
        row,
        `${NODE} back in service`,
        async ({ phase, schedulable, ready }) => {
          if (phase && seen.at(-1) !== phase) seen.push(phase);
          if (phase === 'Rebooting' && !rebootingText) {
            rebootingText = (
              await row.getByTestId('maintenance-phase').innerText()
            ).trim();
          }
          if (!seen.length || phase) return false;
          return schedulable.startsWith('Schedulable') && ready === 'Ready';
        },
        { timeoutMs: 240_000, everyMs: 250 },
      );
      t.diagnostic(`the row showed: ${seen.join(' | ')}`);
      assert.ok(
        seen.includes('Rebooting'),
        `the row went Rebooting (saw ${seen.join(', ')})`,
      );
      assert.equal(
        rebootingText,
        `Rebooting — waiting for ${NODE} to come back`,
      );
      assert.equal(
        (await readRow(row)).maintenance,
        '—',
        'no maintenance left on the row',
      );

      // The cluster agrees: a new boot, one reboot, Complete.
      const node = getJson('node', NODE);
      assert.ok(isReady(node), `${NODE} is Ready`);
      assert.notEqual(node.spec.unschedulable, true, `${NODE} is schedulable`);
      assert.ok(node.status.nodeInfo.bootID, `${NODE} reports a boot ID`);
      assert.notEqual(
        node.status.nodeInfo.bootID,
        bootIdBefore,
        `${NODE} came back with a new boot ID`,
      );
      const maintenances = getJson('nodemaintenances').items.filter(
        m => m.spec.nodeName === NODE && m.spec.intent === 'reboot',
      );
      assert.equal(maintenances.length, 1, `one reboot maintenance of ${NODE}`);
      const [nm] = maintenances;
      assert.equal(nm.status?.phase, 'Complete');
      assert.equal(nm.spec.reason, REASON);
      assert.equal(nm.spec.requestedBy, 'user:default/guest');
      assert.equal(nm.spec.preflight?.ceremony, 'typed-name');
      assert.equal(nm.status?.bootIdBefore, bootIdBefore);
      const reboot = nm.status?.power?.reboot;
      assert.ok(reboot?.recordedAt, 'the reboot was recorded before sending');
      assert.ok(reboot?.sentAt, 'the channel accepted the reboot');
      assert.equal(reboot.channel, 'redfish');
      assert.equal(reboot.error, undefined);
      assert.equal(nm.status.rebootSentAt, reboot.sentAt);
      assert.deepEqual(
        Object.keys(nm.status.power),
        ['reboot'],
        'no other power verb was sent',
      );
      const phases = (nm.status.history ?? []).map(h => h.phase);
      assert.equal(
        phases.filter(p => p === 'Rebooting').length,
        1,
        `Rebooting entered once (${phases.join(' → ')})`,
      );
      assert.ok(
        phases.indexOf('Drained') < phases.indexOf('Rebooting') &&
          phases.indexOf('Rebooting') < phases.indexOf('Returning') &&
          phases.at(-1) === 'Complete',
        `Drained → Rebooting → Returning → Complete (${phases.join(' → ')})`,
      );
      // One reset reached the BMC: the machine went off and on once, and no
      // reboot came in over the Talos API.
      const countsAfter = await machineCounts(machine.uuid);
      t.diagnostic(
        `machine counts before ${JSON.stringify(
          countsBefore,
        )}, after ${JSON.stringify(countsAfter)}`,
      );
      assert.equal(countsAfter.powerOff - countsBefore.powerOff, 1);
      assert.equal(countsAfter.powerOn - countsBefore.powerOn, 1);
      assert.equal(countsAfter.reboot - countsBefore.reboot, 0);

      // The maintenance page says the same.
      await page.goto(
        `${portal.baseUrl}/servers/maintenances/plant-a/${nm.metadata.name}`,
      );
      const chip = page.getByTestId('maintenance-phase-chip');
      await signInIfAsked(page, chip);
      await chip.getByText('Complete').waitFor();
      const record = page.getByTestId('maintenance-power-record');
      assert.equal(await record.count(), 1);
      assert.equal(await record.getAttribute('data-verb'), 'reboot');
      assert.match(await record.innerText(), /Reboot sent at .* over redfish/);
      assert.match(await record.innerText(), /GracefulRestart/);
      const timeline = await page
        .getByTestId('timeline-entry')
        .evaluateAll(els => els.map(e => e.getAttribute('data-phase')));
      assert.deepEqual(timeline.filter(Boolean), phases);
      assert.match(
        await page.getByTestId('maintenance-who').innerText(),
        new RegExp(REASON),
      );
    } finally {
      await page
        .screenshot({ path: SCREENSHOT, fullPage: true })
        .catch(() => {});
      await page.close();
    }
  },
);
