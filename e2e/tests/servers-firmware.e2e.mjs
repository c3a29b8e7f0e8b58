// Browser test of a firmware update in the portal (issue 47, docs/upgrades.md), on the
// demo's redfish deployment, with servers.upgrades allowing one firmware source (and the
// operator's --firmware-sources the same):
//   1. a worker's Server tab shows the BIOS and BMC firmware of its BMC's last reading;
//   2. the row menu's Update firmware opens the dialog: the source from the allowed list,
//      the image path after it, what the BMC reports now (the Components choice), the
//      pre-flight;
//   3. sent with the BIOS checked, the target version typed, the acknowledgement, the
//      typed name and a reason: the NodeMaintenance carries the image URI as it was
//      shown, the version and the BIOS's id as its one target;
//   4. the maintenance page follows the BMC's task (its state and percent) and, when the
//      update is Complete, shows each component's version before and after; the BMC got
//      exactly one SimpleUpdate. axe on the dialog and the maintenance page.
// The rack's BMC takes the version from the image's file name and changes it when its
// task completes (e2e/rack/lib/redfishUpdate.mjs); it fetches nothing.
// Its own rack (net 194) and port (7011): offset 4.
//
//   node --test e2e/tests/servers-firmware.e2e.mjs
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

const SOURCE = 'https://firmware.plant.example';
const REASON = 'e2e: BIOS update (memory training fix), CHG-47';
const SIMPLE_UPDATE =
  '/redfish/v1/UpdateService/Actions/UpdateService.SimpleUpdate';

// The operator the harness starts inherits this process's environment: the same
// allowed source as the backend's servers.upgrades.firmwareSources.
process.env.RACKSIDE_FIRMWARE_SOURCES = SOURCE;

const env = portalAndBrowser(() => {
  const config = path.join(
    fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-e2e-firmware-')),
    'app-config.firmware.yaml',
  );
  fs.writeFileSync(
    config,
    [
      'servers:',
      '  upgrades:',
      '    talosImages:',
      '      - factory.talos.dev/installer/',
      '    firmwareSources:',
      `      - ${SOURCE}`,
      '',
    ].join('\n'),
  );
  return { offset: 4, configs: [config] };
});

/** The rack BMC's control API (e2e/rack/lib/redfishHealth.mjs, redfishUpdate.mjs). */
async function bmcControl(portal, pathname, body) {
  const res = await fetch(
    `${portal.rackInfo().redfish.healthControlUrl}${pathname}`,
    body === undefined
      ? {}
      : {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(body),
        },
  );
  assert.ok(res.ok, `rack BMC ${pathname}: ${res.status}`);
  return res.json();
}

/** The next patch release of a dotted version (2.4.1 -> 2.4.2). */
function nextPatch(version) {
  const parts = version.split('.');
  parts[parts.length - 1] = String(Number(parts.at(-1)) + 1);
  return parts.join('.');
}

const escaped = text => text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

test(
  'the Server tab shows the firmware; the firmware dialog offers the allowed sources and the pre-flight; the maintenance page follows the task and shows the versions',
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

    // 1. The Server tab: the BIOS and BMC of the BMC's reading (Refresh asks the
    // operator for one now; its sweep is every 15 minutes).
    const { reading } = await refreshedServerTab(page, portal, NODE);
    // The rack's BMC names them "Rack BIOS" (updateable) and "Rack BMC".
    const componentNamed = name =>
      reading.firmware.find(c => new RegExp(`\\b${name}\\b`, 'i').test(c.name));
    const bios = componentNamed('BIOS');
    const bmc = componentNamed('BMC');
    assert.ok(
      bios && bmc,
      `the rack's BMC lists a BIOS and a BMC (${JSON.stringify(
        reading.firmware,
      )})`,
    );
    const state = page.getByTestId('entity-server-state');
    await state.waitFor();
    // The card reads the server again once the answer is there (the tab's one read).
    await eventually(
      'the Server tab shows the BIOS and BMC of the reading',
      async () =>
        (await state.getByTestId('entity-server-bios').count()) > 0 &&
        (await state.getByTestId('entity-server-bmc').count()) > 0,
      { timeoutMs: 90_000, everyMs: 1000 },
    );
    assert.match(
      await state.getByTestId('entity-server-bios').innerText(),
      new RegExp(`BIOS[\\s\\S]*${escaped(bios.version)}`),
    );
    assert.match(
      await state.getByTestId('entity-server-bmc').innerText(),
      new RegExp(`BMC firmware[\\s\\S]*${escaped(bmc.version)}`),
    );

    // The BMC's task runs long enough to be seen on the page: the test waits for it
    // running there, then for its end, each on what the page shows.
    const TARGET = nextPatch(bios.version);
    const IMAGE_PATH = `/bios-${TARGET}.bin`;
    const IMAGE_URI = `${SOURCE}${IMAGE_PATH}`;
    await bmcControl(portal, '/health/update', { taskMs: 30_000 });
    const updatesBefore = (
      await bmcControl(portal, '/health/update/requests')
    ).requests.filter(r => r.method === 'POST' && r.path === SIMPLE_UPDATE);

    // 2. The row menu's Update firmware: the dialog.
    await page.goto(`${portal.baseUrl}/servers`);
    const row = serverRow(page, NODE);
    await signInIfAsked(page, row);
    await row.waitFor({ timeout: 60_000 });
    await reloadUntil(
      page,
      row,
      'the row offers Update firmware',
      async () =>
        (await row
          .getByRole('button', { name: `Update firmware ${NODE}` })
          .count()) > 0 || (await row.getByTestId('more-actions').count()) > 0,
    );
    await openRowAction(page, row, `Update firmware ${NODE}`);
    const dialog = page.getByRole('dialog', { name: /Update firmware/ });
    await dialog.getByTestId('preflight').waitFor();
    const source = dialog.getByRole('combobox', { name: /Firmware source/ });
    assert.equal((await source.innerText()).trim(), SOURCE);
    await source.click();
    const options = page.getByRole('listbox').getByRole('option');
    assert.deepEqual(
      (await options.allInnerTexts()).map(t => t.trim()),
      [SOURCE],
      'the sources are servers.upgrades.firmwareSources',
    );
    await page.keyboard.press('Escape');
    await page.getByRole('listbox').waitFor({ state: 'detached' });
    // A path a BMC's parser could read as another host is refused by the rule the
    // backend applies (whyFirmwareSourceRefused), before anything is sent.
    await dialog
      .getByTestId('install-rest')
      .fill('\\\\evil.example\\bios-9.9.9.bin');
    await eventually(
      'the dialog refuses an image URI a BMC could read differently',
      async () =>
        (await dialog.getByTestId('install-shown').count()) === 0 &&
        /backslash/.test(
          await dialog.getByTestId('install-target').innerText(),
        ) &&
        (await dialog
          .getByRole('button', { name: 'Update firmware', exact: true })
          .isDisabled()),
      { timeoutMs: 10_000, everyMs: 200 },
    );
    await dialog.getByTestId('install-rest').fill(IMAGE_PATH);
    assert.equal(
      (await dialog.getByTestId('install-shown').innerText()).trim(),
      `Image URI: ${IMAGE_URI}`,
    );
    assert.equal(
      (await dialog.getByTestId('install-apply').inputValue()).trim(),
      'Immediate',
    );
    // What the BMC reports now (the pre-flight's versions.firmware), as the Components
    // choice: one checkbox per component, with its version now.
    const current = dialog.getByRole('group', { name: 'Components' });
    await current.waitFor();
    const currentText = (await current.innerText()).replace(/\s+/g, ' ');
    assert.match(
      currentText,
      new RegExp(`${escaped(bios.name)} \\(now ${escaped(bios.version)}\\)`),
    );
    assert.match(
      currentText,
      new RegExp(`${escaped(bmc.name)} \\(now ${escaped(bmc.version)}\\)`),
    );
    // The BIOS named as the target (its id as the reading gave it).
    assert.ok(
      bios.id,
      `the reading keeps the BIOS's id (${JSON.stringify(bios)})`,
    );
    await current
      .getByRole('checkbox', { name: new RegExp(`^${escaped(bios.name)} `) })
      .check();
    // The pre-flight, as for a reboot: the quorum effect.
    assert.match(
      await dialog.getByTestId('preflight-quorum').innerText(),
      /quorum/i,
    );
    await expectAxeClean(page, 'the firmware dialog', '[role="dialog"]');

    // 3. Sent with the target version (Done only when the BIOS reports it), the
    // acknowledgement, the typed name and the reason.
    await dialog.getByTestId('install-version').fill(TARGET);
    await dialog.getByTestId('preflight-ack').check();
    await dialog.getByTestId('action-reason').fill(REASON);
    await dialog.getByTestId('action-typed-name').fill(NODE);
    await dialog
      .getByRole('button', { name: 'Update firmware', exact: true })
      .click();
    await dialog.waitFor({ state: 'detached' });
    const maintenance = await eventually(
      `the firmware NodeMaintenance of ${NODE}`,
      () =>
        portal
          .getJson('nodemaintenances')
          .items.find(
            m => m.spec.nodeName === NODE && m.spec.intent === 'firmware',
          ),
    );
    assert.deepEqual(maintenance.spec.firmware, {
      imageURI: IMAGE_URI,
      version: TARGET,
      targets: [bios.id],
    });
    assert.equal(maintenance.spec.reason, REASON);

    // 4. The maintenance page: the image, the BMC's task as it runs, then the versions.
    await page.goto(
      `${portal.baseUrl}/servers/maintenances/plant-a/${maintenance.metadata.name}`,
    );
    const section = page.getByTestId('maintenance-firmware');
    await signInIfAsked(page, section);
    await section.waitFor({ timeout: 60_000 });
    assert.match(
      await section.getByTestId('maintenance-firmware-image').innerText(),
      new RegExp(`Image URI: ${escaped(IMAGE_URI)}`),
    );
    const task = section.getByTestId('maintenance-firmware-task');
    const running = await eventually(
      "the page shows the BMC's task running, with its percent",
      async () => {
        if ((await task.count()) === 0) return undefined;
        const text = (await task.innerText()).replace(/\s+/g, ' ');
        const m = /The BMC's task: (Running), (\d+) %/.exec(text);
        return m ? { state: m[1], percent: Number(m[2]) } : undefined;
      },
      { timeoutMs: 180_000, everyMs: 500 },
    );
    assert.ok(
      running.percent >= 0 && running.percent < 100,
      `a running task's percent (${running.percent})`,
    );
    assert.equal(
      await task
        .getByRole('progressbar', { name: "The BMC's task" })
        .getAttribute('aria-valuenow'),
      String(running.percent),
    );
    // The page follows the task (the operator reads it every 2 s): a later percent.
    await eventually(
      "the page shows the BMC's task further on",
      async () => {
        const text = (await task.innerText()).replace(/\s+/g, ' ');
        const m = /The BMC's task: (\w+)(?:, (\d+) %)?/.exec(text);
        return (
          m && (m[1] !== 'Running' || Number(m[2]) > running.percent) && true
        );
      },
      { timeoutMs: 60_000, everyMs: 500 },
    );
    const versions = section.getByRole('table', {
      name: 'Firmware before and after',
    });
    await eventually(
      'the maintenance page shows the update Complete, the BIOS before and after',
      async () => {
        const phase = (
          await page.getByTestId('maintenance-phase-chip').innerText()
        ).trim();
        if (phase !== 'Complete') return undefined;
        const rows = await versions
          .locator('tbody tr')
          .evaluateAll(trs =>
            trs.map(tr =>
              [...tr.querySelectorAll('td')].map(td => td.textContent.trim()),
            ),
          );
        return rows.some(
          r =>
            r[0] === bios.name &&
            r[1] === bios.version &&
            r[2] === `${TARGET} (changed)`,
        )
          ? rows
          : undefined;
      },
      { timeoutMs: 180_000, everyMs: 1000 },
    ).then(rows => {
      // The BMC's own firmware is not updateable on the rack: before and after the same.
      assert.ok(
        rows.some(
          r =>
            r[0] === bmc.name && r[1] === bmc.version && r[2] === bmc.version,
        ),
        `the BMC row unchanged: ${JSON.stringify(rows)}`,
      );
    });
    assert.match(
      (await task.innerText()).replace(/\s+/g, ' '),
      /The BMC's task: Completed/,
    );
    await expectAxeClean(
      page,
      'the maintenance page',
      '[data-testid="rackside-maintenance-page"]',
    );

    // On the cluster: the record, and one SimpleUpdate with the URI shown.
    const finished = portal.getJson(
      'nodemaintenances',
      maintenance.metadata.name,
    );
    assert.equal(finished.status.phase, 'Complete');
    const beforeBios = finished.status.firmware.before.find(
      c => c.name === bios.name,
    );
    const afterBios = finished.status.firmware.after.find(
      c => c.name === bios.name,
    );
    assert.equal(beforeBios?.version, bios.version);
    assert.equal(afterBios?.version, TARGET);
    const updates = (
      await bmcControl(portal, '/health/update/requests')
    ).requests.filter(r => r.method === 'POST' && r.path === SIMPLE_UPDATE);
    assert.equal(
      updates.length,
      updatesBefore.length + 1,
      'exactly one SimpleUpdate was sent',
    );
    assert.equal(updates.at(-1).body.ImageURI, IMAGE_URI);
  },
);
