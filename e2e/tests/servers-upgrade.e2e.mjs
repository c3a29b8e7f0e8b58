// Browser test of upgrades in the portal (issue 47, docs/upgrades.md). The demo portal
// with servers.upgrades allowing the Talos factory's installers (and the operator's
// --talos-image-prefixes the same):
//   1. a worker's Server tab shows its Talos version and the BIOS and BMC firmware of
//      its BMC's last reading (the demo's redfish channel reads the inventory);
//   2. the power channel becomes talos (the one that can upgrade); the Servers page's
//      Talos column shows each node's version as its Node's osImage names it;
//   3. another worker already runs the target: its Upgrade dialog says so and cannot be
//      sent;
//   4. the guest upgrades the worker through the dialog: the target from the allowed
//      list, the pre-flight with the version it runs now, the typed name and a reason;
//      the maintenance page shows the upgrade's progress and its versions before and
//      after, and the machine got exactly one Upgrade; the row's Talos column shows the
//      new version. axe on the dialog and the maintenance page.
// Its own rack (net 198) and port (7015): offset 8.
//
//   node --test e2e/tests/servers-upgrade.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  eventually,
  expectAxeClean,
  openRowAction,
  pickDrainableWorker,
  portalAndBrowser,
  refreshedServerTab,
  reloadUntil,
  serverRow,
  signInIfAsked,
  waitForRedfishReboot,
} from './harness.mjs';

const FACTORY = 'factory.talos.dev/installer/';
const SCHEMATIC =
  '376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba';
const REASON = 'e2e: Talos upgrade (CVE fixes), CHG-47';

// The operator the harness starts inherits this process's environment: the same
// allowed prefixes as the backend's servers.upgrades (it refuses anything else).
process.env.RACKSIDE_TALOS_IMAGE_PREFIXES = FACTORY;

const env = portalAndBrowser(() => {
  const config = path.join(
    fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-e2e-upgrade-')),
    'app-config.upgrades.yaml',
  );
  fs.writeFileSync(
    config,
    [
      'servers:',
      '  upgrades:',
      '    talosImages:',
      `      - ${FACTORY}`,
      '    firmwareSources:',
      '      - https://firmware.plant.example',
      '',
    ].join('\n'),
  );
  return { offset: 8, configs: [config] };
});

/** The Talos version a Node's osImage names ("Talos (v1.11.3)"). */
const versionOf = node =>
  /^Talos \((v[^()\s]+)\)$/.exec(node.status?.nodeInfo?.osImage ?? '')?.[1];

/** A version that is not `current`: the next minor release. */
function targetAfter(current) {
  const m = /^v(\d+)\.(\d+)\.(\d+)/.exec(current ?? '');
  return m ? `v${m[1]}.${Number(m[2]) + 1}.0` : 'v1.99.0';
}

/** The Talos emulator's control API (e2e/rack/README.md). */
async function talosControl(portal, pathname, init = {}) {
  const res = await fetch(`${portal.rackInfo().talos.controlUrl}${pathname}`, {
    ...init,
    headers: { 'content-type': 'application/json', ...init.headers },
  });
  assert.ok(res.ok, `Talos emulator ${pathname}: ${res.status}`);
  return res.json();
}

test(
  'the Server tab shows the versions; the upgrade dialog offers the allowed targets and the pre-flight; the maintenance page shows the progress',
  { timeout: 600_000 },
  async () => {
    const { portal } = env;
    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    await waitForRedfishReboot(portal);
    const withBmc = portal
      .getJson('serverbmcs')
      .items.map(b => b.metadata.name);
    const worker = pickDrainableWorker(portal.kubectl, {
      among: withBmc,
      needPods: false,
    });
    assert.ok(worker, `a drainable worker with a ServerBMC among ${withBmc}`);
    const NODE = worker.name;
    const machine = portal.machineOf(NODE);
    assert.ok(machine?.uuid, `${NODE} is a machine of the rack`);
    const FROM = versionOf(portal.getJson('node', NODE));
    assert.ok(FROM, `${NODE}'s osImage names a Talos version`);
    const TARGET = targetAfter(FROM);
    const IMAGE = `${FACTORY}${SCHEMATIC}:${TARGET}`;

    // 1. The Server tab: Talos, and the BIOS and BMC of the BMC's reading (Refresh asks
    // the operator for one now; its sweep is every 15 minutes).
    const { reading } = await refreshedServerTab(page, portal, NODE);
    // The rack's BMC names them "Rack BIOS" and "Rack BMC" (e2e/rack/lib/redfishUpdate.mjs).
    const firmwareNamed = name =>
      reading.firmware.find(c => new RegExp(`\\b${name}\\b`, 'i').test(c.name))
        ?.version;
    const state = page.getByTestId('entity-server-state');
    await state.waitFor();
    // The card reads the server again once the answer is there (the tab's one read).
    await eventually(
      'the Server tab shows the reading that answers the refresh',
      async () =>
        (await state.getByTestId('entity-server-bios').count()) > 0 ||
        (await state.getByTestId('entity-server-bmc').count()) > 0,
      { timeoutMs: 90_000, everyMs: 1000 },
    );
    assert.equal(
      (await state.getByTestId('entity-server-talos').innerText()).replace(
        /\s+/g,
        ' ',
      ),
      `Talos ${FROM}`,
    );
    if (firmwareNamed('BIOS')) {
      assert.match(
        await state.getByTestId('entity-server-bios').innerText(),
        new RegExp(firmwareNamed('BIOS').replace(/\./g, '\\.')),
      );
    }
    if (firmwareNamed('BMC')) {
      assert.match(
        await state.getByTestId('entity-server-bmc').innerText(),
        new RegExp(firmwareNamed('BMC').replace(/\./g, '\\.')),
      );
    }
    assert.ok(
      firmwareNamed('BIOS') || firmwareNamed('BMC'),
      `the rack's BMC lists a BIOS or a BMC (${JSON.stringify(
        reading.firmware,
      )})`,
    );

    // 2. The talos channel (upgrades go over it), a visible installer run.
    portal.kubectl(
      'patch',
      'powerprovider',
      'default',
      '--type=merge',
      '-p',
      JSON.stringify({
        spec: {
          type: 'talos',
          redfish: null,
          talos: {
            secretRef: {
              namespace: 'rackside-system',
              name: 'plant-a-talosconfig',
              key: 'talosconfig',
            },
          },
        },
      }),
    );
    await eventually(
      'the talos PowerProvider advertises reboot',
      () => {
        const pp = portal.getJson('powerproviders', 'default');
        return (
          pp.spec.type === 'talos' &&
          pp.status?.observedGeneration === pp.metadata.generation &&
          pp.status?.reboot === true
        );
      },
      { timeoutMs: 120_000 },
    );
    await talosControl(portal, '/upgrade', {
      method: 'PUT',
      // Long enough that the page can be seen while Talos installs: the test waits for
      // the send on the object, then for the page, within this window.
      body: JSON.stringify({ delayMs: 20_000 }),
    });

    // 3. Another worker already at the target.
    const other = portal
      .getJson('nodes')
      .items.find(
        n =>
          n.metadata.name !== NODE &&
          !(
            'node-role.kubernetes.io/control-plane' in (n.metadata.labels ?? {})
          ) &&
          portal.machineOf(n.metadata.name)?.uuid,
      );
    assert.ok(other, 'another worker of the rack');
    const OTHER = other.metadata.name;
    await talosControl(
      portal,
      `/machines/${encodeURIComponent(portal.machineOf(OTHER).uuid)}/version`,
      { method: 'POST', body: JSON.stringify({ version: TARGET }) },
    );
    await eventually(`${OTHER} reports ${TARGET}`, () =>
      versionOf(portal.getJson('node', OTHER)) === TARGET ? true : undefined,
    );

    // The Talos column: each row as its Node's osImage names it.
    await page.goto(`${portal.baseUrl}/servers`);
    const row = serverRow(page, NODE);
    await signInIfAsked(page, row);
    await row.waitFor({ timeout: 60_000 });
    const otherRow = serverRow(page, OTHER);
    await reloadUntil(
      page,
      row,
      'the rows offer Upgrade Talos and show the versions',
      async () =>
        (await row.getByTestId('talos-cell').innerText()).trim() === FROM &&
        (await otherRow.getByTestId('talos-cell').innerText()).trim() ===
          TARGET &&
        ((await row
          .getByRole('button', { name: `Upgrade Talos ${NODE}` })
          .count()) > 0 ||
          (await row.getByTestId('more-actions').count()) > 0),
    );
    for (const n of portal.getJson('nodes').items) {
      const cell = serverRow(page, n.metadata.name).getByTestId('talos-cell');
      if ((await cell.count()) === 0) continue; // below the table's window
      assert.equal(
        (await cell.innerText()).trim(),
        versionOf(n) ?? '—',
        `the Talos column of ${n.metadata.name}`,
      );
    }

    // The dialog of the worker already there: it says so and cannot be sent.
    await openRowAction(page, otherRow, `Upgrade Talos ${OTHER}`);
    let dialog = page.getByRole('dialog');
    await dialog.getByTestId('preflight').waitFor();
    await dialog.getByTestId('install-rest').fill(`${SCHEMATIC}:${TARGET}`);
    assert.equal(
      (await dialog.getByTestId('install-already').innerText()).trim(),
      `${OTHER} is already at ${TARGET}: there is nothing to upgrade.`,
    );
    assert.equal(
      await dialog
        .getByRole('button', { name: 'Upgrade Talos', exact: true })
        .isDisabled(),
      true,
    );
    await dialog.getByRole('button', { name: 'Cancel' }).click();
    await dialog.waitFor({ state: 'detached' });

    // 4. The upgrade of NODE, with the keyboard where it matters: the source list.
    const before = await talosControl(
      portal,
      `/machines/${encodeURIComponent(machine.uuid)}/upgrades`,
    );
    await openRowAction(page, row, `Upgrade Talos ${NODE}`);
    dialog = page.getByRole('dialog', { name: `Upgrade Talos: ${NODE}` });
    await dialog.getByTestId('preflight').waitFor();
    const source = dialog.getByRole('combobox', {
      name: /Installer image source/,
    });
    assert.equal((await source.innerText()).trim(), FACTORY);
    await source.focus();
    await page.keyboard.press('ArrowDown');
    const options = page.getByRole('listbox').getByRole('option');
    assert.deepEqual(
      (await options.allInnerTexts()).map(t => t.trim()),
      [FACTORY],
      'the target list is servers.upgrades.talosImages',
    );
    await page.keyboard.press('Enter');
    await page.getByRole('listbox').waitFor({ state: 'detached' });
    await dialog.getByTestId('install-rest').fill(`${SCHEMATIC}:${TARGET}`);
    assert.equal(
      (await dialog.getByTestId('install-shown').innerText()).trim(),
      `Image: ${IMAGE}`,
    );
    assert.equal(
      (await dialog.getByTestId('install-current').innerText()).trim(),
      `${NODE} runs Talos ${FROM} now. The upgrade installs ${TARGET}.`,
    );
    // The pre-flight, as for a reboot: the quorum and what the drain evicts.
    assert.match(
      await dialog.getByTestId('preflight-quorum').innerText(),
      /quorum/i,
    );
    await expectAxeClean(page, 'the upgrade dialog', '[role="dialog"]');
    await dialog.getByTestId('preflight-ack').check();
    await dialog.getByTestId('action-reason').fill(REASON);
    await dialog.getByTestId('action-typed-name').fill(NODE);
    await dialog
      .getByRole('button', { name: 'Upgrade Talos', exact: true })
      .click();
    await dialog.waitFor({ state: 'detached' });

    const maintenance = await eventually(
      `the upgrade NodeMaintenance of ${NODE}`,
      () =>
        portal
          .getJson('nodemaintenances')
          .items.find(
            m => m.spec.nodeName === NODE && m.spec.intent === 'upgrade',
          ),
    );
    assert.deepEqual(maintenance.spec.upgrade, { image: IMAGE });
    assert.equal(maintenance.spec.reason, REASON);

    // The maintenance page: the versions, and the progress until it is back.
    await page.goto(
      `${portal.baseUrl}/servers/maintenances/plant-a/${maintenance.metadata.name}`,
    );
    const section = page.getByTestId('maintenance-upgrade');
    await signInIfAsked(page, section);
    await section.waitFor({ timeout: 60_000 });
    assert.match(
      await section.getByTestId('maintenance-upgrade-image').innerText(),
      new RegExp(`Image: ${IMAGE.replace(/[.]/g, '\\.')}`),
    );
    const stepStates = () =>
      section
        .getByTestId('install-step')
        .evaluateAll(items => items.map(i => i.getAttribute('data-state')));
    // Talos accepted it and installs (the emulator's installer run): the page shows the
    // step in progress, the versions before and the target.
    await eventually(
      'Talos accepted the upgrade (status.upgrade.sentAt)',
      () =>
        portal.getJson('nodemaintenances', maintenance.metadata.name).status
          ?.upgrade?.sentAt,
      { timeoutMs: 180_000 },
    );
    await eventually(
      'the page shows the upgrade accepted, waiting for the node to come back',
      async () => {
        const states = await stepStates();
        const versions = await section
          .getByTestId('maintenance-upgrade-versions')
          .innerText();
        return (
          states.join() === 'done,done,done,now,waiting' &&
          versions.includes(
            `Before: ${FROM} · Target: ${TARGET} · After: not back yet`,
          )
        );
      },
      { timeoutMs: 15_000, everyMs: 250 },
    );
    await eventually(
      'the maintenance page shows the upgrade back on the target and Complete',
      async () => {
        const versions = await section
          .getByTestId('maintenance-upgrade-versions')
          .innerText();
        const phase = (
          await page.getByTestId('maintenance-phase-chip').innerText()
        ).trim();
        return (
          phase === 'Complete' &&
          versions.includes(`Before: ${FROM}`) &&
          versions.includes(`Target: ${TARGET}`) &&
          versions.includes(`After: ${TARGET}`)
        );
      },
      { timeoutMs: 240_000, everyMs: 1000 },
    );
    assert.deepEqual(await stepStates(), [
      'done',
      'done',
      'done',
      'done',
      'done',
    ]);
    await expectAxeClean(
      page,
      'the maintenance page',
      '[data-testid="rackside-maintenance-page"]',
    );

    // On the cluster: the object's record, one Upgrade, the Node on the new version.
    const finished = portal.getJson(
      'nodemaintenances',
      maintenance.metadata.name,
    );
    assert.equal(finished.status.phase, 'Complete');
    assert.equal(finished.status.upgrade.fromVersion, FROM);
    assert.equal(finished.status.upgrade.cameBackOn, TARGET);
    const after = await talosControl(
      portal,
      `/machines/${encodeURIComponent(machine.uuid)}/upgrades`,
    );
    assert.equal(after.count, before.count + 1, 'exactly one Upgrade was sent');
    assert.equal(after.version, TARGET);
    assert.equal(versionOf(portal.getJson('node', NODE)), TARGET);

    // The row's Talos column follows.
    await page.goto(`${portal.baseUrl}/servers`);
    await signInIfAsked(page, serverRow(page, NODE));
    await eventually(`the Talos column of ${NODE} shows ${TARGET}`, async () =>
      (
        await serverRow(page, NODE).getByTestId('talos-cell').innerText()
      ).trim() === TARGET
        ? true
        : undefined,
    );
  },
);
