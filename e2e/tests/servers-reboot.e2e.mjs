// Browser test of a reboot on the demo portal: a guest (plant-admins) picks a
// worker with a BMC and no pod that blocks a drain, opens Reboot on /servers,
// reads the pre-flight, acknowledges it, types the node name, gives a reason,
// submits, and watches the row go Rebooting and come back in service. Then the
// cluster is checked with the admin kubeconfig: the node has a new boot ID,
// the NodeMaintenance ended Complete with exactly one reboot sent over
// redfish, and the machine saw exactly one power cycle. The maintenance page
// shows the power record and the timeline.
//
// Then the guard at send time (docs/architecture.md, "The maintenance lifecycle"): the guest reboots control-plane
// node cp-1 at margin 1 through the hazard dialog while a budget holds its
// drain; another member (cp-3) goes down behind Rackside's back (the Talos
// emulator's control API); the budget goes away. The operator runs the guard
// again right before sending: Refused, nothing sent. The row and the
// maintenance page show the refusal with its numbers, and the row's return to
// service brings cp-1 back.
// Its own rack (net 195) and port (7012), so it never meets the other tests.
//
//   node --test e2e/tests/servers-reboot.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  actWithReason,
  allowEmptyDirEviction,
  eventually,
  openServersPage,
  pickDrainableWorker,
  portalAndBrowser,
  readRow,
  reloadUntil,
  serverRow,
  signInIfAsked,
  waitForRedfishReboot,
  waitForRow,
  waitForShopWorkloads,
} from './harness.mjs';

const SCREENSHOT =
  process.env.RACKSIDE_E2E_REBOOT_SCREENSHOT ?? '/tmp/rackside-e2e-reboot.png';
const DIALOG_SCREENSHOT = SCREENSHOT.replace(/(\.png)?$/, '-dialog.png');
const REASON = 'e2e: firmware update, TICKET-7';

const env = portalAndBrowser({ offset: 5 });

const getJson = (...args) => env.portal.getJson(...args);

const isReady = node =>
  (node.status?.conditions ?? []).some(
    c => c.type === 'Ready' && c.status === 'True',
  );

test(
  'a guest reboots a worker through the typed-name dialog and watches it come back',
  { timeout: 480_000 },
  async t => {
    // The operator has read the demo's PowerProvider and advertises reboot.
    await waitForRedfishReboot(env.portal);
    // The fixture's workloads are scheduled (and Running) before we choose.
    await waitForShopWorkloads(env.portal);
    const withBmc = getJson('serverbmcs').items.map(b => b.metadata.name);
    const worker = pickDrainableWorker(env.portal.kubectl, {
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
    const machine = env.portal.machineOf(NODE);
    assert.ok(machine?.bmc, `${NODE}'s machine has a BMC in the fixture`);
    const bootIdBefore = getJson('node', NODE).status.nodeInfo.bootID;
    assert.ok(bootIdBefore, `${NODE} reports a boot ID`);
    const countsBefore = await env.portal.machineCounts(machine.uuid);
    t.diagnostic(
      `rebooting ${NODE} (boot ID ${bootIdBefore}); pods to evict: ${
        toEvict.join(', ') || 'none'
      }`,
    );

    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      const row = await openServersPage(page, env.portal, NODE);
      // The backend's caches may read the PowerProvider's advertisement after
      // the page's first load: ask again until the row offers Reboot.
      const rebootButton = row.getByRole('button', { name: `Reboot ${NODE}` });
      await reloadUntil(page, row, `the row of ${NODE} offers Reboot`, () =>
        rebootButton.isVisible(),
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
      const countsAfter = await env.portal.machineCounts(machine.uuid);
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
        `${env.portal.baseUrl}/servers/maintenances/plant-a/${nm.metadata.name}`,
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

/** The control-plane node the refused reboot is asked for (it has a BMC), and the member that goes down. */
const CP = 'cp-1';
const DOWN = 'cp-3';
const HELD_NS = 'send-guard-e2e';
const HAZARD_REASON = 'e2e: etcd disk swap on cp-1, TICKET-9';

/** Applies Kubernetes objects with the admin kubeconfig (kubectl apply -f, from a temp file). */
function applyAsAdmin(objects) {
  const file = path.join(
    fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-e2e-apply-')),
    'objects.json',
  );
  fs.writeFileSync(
    file,
    JSON.stringify({ apiVersion: 'v1', kind: 'List', items: objects }),
  );
  try {
    env.portal.kubectl('apply', '-f', file);
  } finally {
    fs.rmSync(path.dirname(file), { recursive: true, force: true });
  }
}

/** Powers a machine on or off behind Rackside's back (the Talos emulator's control API). */
async function powerBehindTheBack(node, state) {
  const machine = env.portal.machineOf(node);
  const res = await fetch(
    `${env.portal.rackInfo().talos.controlUrl}/machines/${
      machine.uuid
    }/power?state=${state}`,
    { method: 'POST' },
  );
  assert.equal(res.status, 200, `the emulator powers ${node} ${state}`);
}

test(
  'a hazard reboot of a control-plane node admitted at margin 1 is refused at send once another member went down: the row and the maintenance page show the numbers, nothing is sent, return to service works',
  { timeout: 480_000 },
  async t => {
    await waitForRedfishReboot(env.portal);
    const withBmc = getJson('serverbmcs').items.map(b => b.metadata.name);
    assert.ok(withBmc.includes(CP), `${CP} has a ServerBMC (${withBmc})`);
    const machine = env.portal.machineOf(CP);
    const controlPlane = getJson('nodes').items.filter(
      n => 'node-role.kubernetes.io/control-plane' in (n.metadata.labels ?? {}),
    );
    assert.equal(controlPlane.length, 3, 'three control-plane members');
    assert.ok(controlPlane.every(isReady), 'all three Ready: margin 1');

    // One pod on cp-1 behind a budget that allows no disruption: the drain waits.
    applyAsAdmin([
      { apiVersion: 'v1', kind: 'Namespace', metadata: { name: HELD_NS } },
      {
        apiVersion: 'apps/v1',
        kind: 'Deployment',
        metadata: { name: 'held', namespace: HELD_NS },
        spec: {
          replicas: 1,
          selector: { matchLabels: { app: 'held' } },
          template: {
            metadata: { labels: { app: 'held' } },
            spec: {
              nodeSelector: { 'kubernetes.io/hostname': CP },
              tolerations: [
                {
                  key: 'node-role.kubernetes.io/control-plane',
                  operator: 'Exists',
                  effect: 'NoSchedule',
                },
              ],
              containers: [{ name: 'held', image: 'registry.example/held:1' }],
            },
          },
        },
      },
      {
        apiVersion: 'policy/v1',
        kind: 'PodDisruptionBudget',
        metadata: { name: 'held', namespace: HELD_NS },
        spec: { minAvailable: 1, selector: { matchLabels: { app: 'held' } } },
      },
    ]);
    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      await eventually(
        `held Running on ${CP}, its budget allowing no disruption`,
        () => {
          const pdb = getJson('pdb', 'held', '-n', HELD_NS);
          const pods = getJson('pods', '-n', HELD_NS).items;
          return (
            pods.some(
              p => p.spec.nodeName === CP && p.status?.phase === 'Running',
            ) &&
            pdb.status?.observedGeneration === pdb.metadata.generation &&
            pdb.status?.currentHealthy === 1 &&
            pdb.status?.disruptionsAllowed === 0
          );
        },
        { timeoutMs: 120_000 },
      );
      const countsBefore = await env.portal.machineCounts(machine.uuid);

      await page.goto(`${env.portal.baseUrl}/servers`);
      const row = serverRow(page, CP);
      await signInIfAsked(page, row);
      await row.waitFor({ timeout: 60_000 });
      const rebootButton = row.getByRole('button', { name: `Reboot ${CP}` });
      await reloadUntil(page, row, `the row of ${CP} offers Reboot`, () =>
        rebootButton.isVisible(),
      );
      await rebootButton.click();

      // The hazard ceremony: acknowledged impact, typed reason, typed node name.
      const dialog = page.getByRole('dialog');
      await dialog.getByTestId('preflight').waitFor();
      await dialog.locator('[data-ceremony="hazard"]').waitFor();
      // The hazard tier's warning, in the dialog's words.
      await dialog
        .getByText('This takes the cluster to the edge of quorum', {
          exact: false,
        })
        .waitFor();
      await dialog
        .getByTestId('preflight-evict')
        .getByText(`${HELD_NS}/`, { exact: false })
        .first()
        .waitFor();
      const submit = dialog.getByRole('button', {
        name: 'Reboot',
        exact: true,
      });
      await dialog.getByTestId('action-reason').fill(HAZARD_REASON);
      await dialog.getByLabel('I have reviewed this impact').check();
      assert.equal(
        await submit.isDisabled(),
        true,
        'no hazard reboot before the node name is typed',
      );
      await dialog.getByLabel(`Type ${CP} to confirm`).fill(CP);
      assert.equal(
        await submit.isDisabled(),
        false,
        'the ceremony is complete',
      );
      await submit.click();
      await dialog.waitFor({ state: 'detached' });

      // The drain is held by the budget.
      await waitForRow(
        row,
        `${CP} draining, blocked by held`,
        async ({ phase }) =>
          phase === 'Draining' &&
          /blocked by held/.test(
            await row
              .getByTestId('maintenance-blocking')
              .innerText()
              .catch(() => ''),
          ),
        { timeoutMs: 90_000, everyMs: 250 },
      );
      const [admitted] = getJson('nodemaintenances').items.filter(
        m => m.spec.nodeName === CP && m.spec.intent === 'reboot',
      );
      assert.ok(admitted, `a reboot maintenance of ${CP}`);
      assert.equal(admitted.spec.preflight?.ceremony, 'hazard');
      assert.equal(admitted.spec.requestedBy, 'user:default/guest');

      // Meanwhile another member goes down, outside Rackside.
      await powerBehindTheBack(DOWN, 'off');
      await eventually(
        `${DOWN} NotReady`,
        () => !isReady(getJson('node', DOWN)),
        { timeoutMs: 60_000 },
      );

      // The budget goes away: the drain finishes, and the reboot would be next.
      env.portal.kubectl('delete', 'pdb', 'held', '-n', HELD_NS, '--wait=true');
      const seen = [];
      await waitForRow(
        row,
        `${CP} Refused`,
        ({ phase }) => {
          if (phase && seen.at(-1) !== phase) seen.push(phase);
          return phase === 'Refused';
        },
        { timeoutMs: 120_000, everyMs: 250 },
      );
      t.diagnostic(`the row showed: ${seen.join(' | ')}`);
      assert.ok(
        !seen.includes('Rebooting'),
        `never Rebooting (saw ${seen.join(', ')})`,
      );

      // The row: Refused, with the numbers.
      const NUMBERS = 'Members 3, quorum 2, ready 2, margin 0.';
      assert.equal(
        (await row.getByTestId('maintenance-phase').innerText()).trim(),
        'Refused',
      );
      assert.equal(
        (await row.getByTestId('maintenance-refusal').innerText()).trim(),
        NUMBERS,
      );
      assert.match((await readRow(row)).schedulable, /Cordoned/);

      // The cluster: nothing sent, the node left cordoned and drained.
      const nm = getJson('nodemaintenance', admitted.metadata.name);
      assert.equal(nm.status?.phase, 'Refused');
      assert.equal(nm.status?.power, undefined, 'no power verb recorded');
      assert.equal(nm.status?.rebootSentAt, undefined);
      assert.deepEqual(
        {
          members: nm.status.refusal?.members,
          quorum: nm.status.refusal?.quorum,
          ready: nm.status.refusal?.ready,
          margin: nm.status.refusal?.margin,
        },
        { members: 3, quorum: 2, ready: 2, margin: 0 },
      );
      assert.match(nm.status.refusal.reason, /at admission/i);
      assert.match(nm.status.refusal.reason, new RegExp(DOWN));
      assert.deepEqual((nm.status.history ?? []).map(h => h.phase).slice(-2), [
        'Drained',
        'Refused',
      ]);
      assert.equal(getJson('node', CP).spec.unschedulable, true);
      assert.deepEqual(
        getJson('pods', '-n', HELD_NS).items.filter(
          p => p.spec.nodeName === CP && !p.metadata.deletionTimestamp,
        ),
        [],
        `${CP} is drained`,
      );
      const countsAfter = await env.portal.machineCounts(machine.uuid);
      t.diagnostic(
        `${CP} machine counts before ${JSON.stringify(
          countsBefore,
        )}, after ${JSON.stringify(countsAfter)}`,
      );
      assert.deepEqual(countsAfter, countsBefore, `nothing reached ${CP}`);

      // The maintenance page says the same, and where to return the node to service.
      await page.goto(
        `${env.portal.baseUrl}/servers/maintenances/plant-a/${nm.metadata.name}`,
      );
      const chip = page.getByTestId('maintenance-phase-chip');
      await signInIfAsked(page, chip);
      await chip.getByText('Refused').waitFor();
      const alert = page.getByTestId('maintenance-refusal');
      const alertText = await alert.innerText();
      assert.ok(alertText.includes(NUMBERS), `the numbers: ${alertText}`);
      assert.ok(
        alertText.includes(nm.status.refusal.reason),
        `the operator's reason: ${alertText}`,
      );
      assert.match(
        await page.getByTestId('maintenance-refusal-return').innerText(),
        new RegExp(`Nothing was sent: ${CP} is left cordoned and drained`),
      );
      assert.equal(
        await page.getByTestId('maintenance-power-record').count(),
        0,
        'no power record',
      );

      // Return to service from the row.
      await page.goto(`${env.portal.baseUrl}/servers`);
      await signInIfAsked(page, row);
      await row.waitFor({ timeout: 60_000 });
      await actWithReason(page, row, {
        action: 'Return to service',
        node: CP,
        reason: 'e2e: refused, back in, TICKET-9',
      });
      await waitForRow(
        row,
        `${CP} back in service`,
        r => r.maintenance === '—' && r.schedulable.startsWith('Schedulable'),
        { timeoutMs: 90_000, everyMs: 250 },
      );
      assert.notEqual(getJson('node', CP).spec.unschedulable, true);
      const returned = getJson('nodemaintenances').items.filter(
        m =>
          m.spec.nodeName === CP &&
          m.spec.returnToService?.by === 'user:default/guest',
      );
      assert.equal(returned.length, 1, 'one return to service, by the guest');
      assert.equal(returned[0].status?.phase, 'Complete');
      assert.deepEqual(
        await env.portal.machineCounts(machine.uuid),
        countsBefore,
        `still nothing sent to ${CP}`,
      );
    } finally {
      await page
        .screenshot({
          path: SCREENSHOT.replace(/(\.png)?$/, '-refused.png'),
          fullPage: true,
        })
        .catch(() => {});
      await page.close();
      await powerBehindTheBack(DOWN, 'on').catch(() => {});
      try {
        env.portal.kubectl('delete', 'namespace', HELD_NS, '--wait=false');
      } catch {
        /* best effort */
      }
    }
  },
);
