// Browser test of a rolling Talos upgrade through the plan dialog (issue 47,
// docs/upgrades.md "Rolling upgrades through a plan"). The demo portal with
// servers.upgrades allowing the Talos factory's installers (and the operator's
// --talos-image-prefixes the same), on the talos power channel:
//   1. one of three workers already runs the target (the Talos emulator's version);
//   2. the guest selects the three on /servers, opens the plan dialog, chooses Upgrade
//      Talos, picks the target from the allowed list; the plan pre-flight says the one
//      already there is skipped and counts the two others (two steps, one at a time);
//   3. the ceremony (reason, acknowledgement, the two typed) creates the plan; its page
//      says "1 of 3 at vX" and reaches "3 of 3 at vX", Complete, each upgraded worker
//      with its versions before and after, and exactly one Upgrade sent to each
//      machine (none to the one already there). axe on the dialog and the plan page.
// Its own port (7042) and a free rack network (claimRackNet).
//
//   node --test e2e/tests/servers-upgrade-plan.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  eventually,
  formatViolations,
  openServersPage,
  portalAndBrowser,
  runAxe,
  signInIfAsked,
  waitForRedfishReboot,
  waitForShopWorkloads,
} from './harness.mjs';

const FACTORY = 'factory.talos.dev/installer/';
const SCHEMATIC =
  '376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba';
const REASON = 'e2e: rolling Talos upgrade (CVE fixes), CHG-47';

// The operator the harness starts inherits this process's environment: the same
// allowed prefixes as the backend's servers.upgrades (it refuses anything else).
process.env.RACKSIDE_TALOS_IMAGE_PREFIXES = FACTORY;

const env = portalAndBrowser(
  () => {
    const config = path.join(
      fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-e2e-upgrade-plan-')),
      'app-config.upgrades.yaml',
    );
    fs.writeFileSync(
      config,
      [
        'servers:',
        '  upgrades:',
        '    talosImages:',
        `      - ${FACTORY}`,
        '',
      ].join('\n'),
    );
    return { offset: 35, configs: [config] };
  },
  { claimNet: true },
);

const getJson = (...args) => env.portal.getJson(...args);

/** The Talos version a Node's osImage names ("Talos (v1.11.3)"). */
const versionOf = node =>
  /^Talos \((v[^()\s]+)\)$/.exec(node.status?.nodeInfo?.osImage ?? '')?.[1];

/** A version that is not `current`: the next minor release. */
function targetAfter(current) {
  const m = /^v(\d+)\.(\d+)\.(\d+)/.exec(current ?? '');
  return m ? `v${m[1]}.${Number(m[2]) + 1}.0` : 'v1.99.0';
}

/** The Talos emulator's control API (e2e/rack/README.md). */
async function talosControl(pathname, init = {}) {
  const res = await fetch(
    `${env.portal.rackInfo().talos.controlUrl}${pathname}`,
    {
      ...init,
      headers: { 'content-type': 'application/json', ...init.headers },
    },
  );
  assert.ok(res.ok, `Talos emulator ${pathname}: ${res.status}`);
  return res.json();
}

const machinePath = node =>
  `/machines/${encodeURIComponent(env.portal.machineOf(node).uuid)}`;

/** No serious or critical axe violation (the rest reported as diagnostics). */
async function assertAxeClean(t, page, what, include) {
  const axe = await runAxe(page, include ? { include } : {});
  assert.deepEqual(
    axe.blocking,
    [],
    `${what}:\n${formatViolations(axe.blocking)}`,
  );
  if (axe.other.length)
    t.diagnostic(`${what}:\n${formatViolations(axe.other)}`);
}

test(
  'a guest rolls a Talos upgrade over three workers through the plan dialog; the one already there is skipped',
  { timeout: 600_000 },
  async t => {
    await waitForRedfishReboot(env.portal);
    await waitForShopWorkloads(env.portal);
    // The fixture's payments budget blocks every eviction by design (as in the plan test).
    env.portal.kubectl('delete', 'pdb', 'payments', '-n', 'shop');

    // Three workers of the rack with no unmanaged pod (a drain without force finishes).
    const pods = getJson('pods', '-A').items;
    const unmanaged = new Set(
      pods
        .filter(p => !(p.metadata.ownerReferences ?? []).length)
        .map(p => p.spec.nodeName),
    );
    const NODES = getJson('nodes')
      .items.filter(
        n =>
          n.metadata.name.startsWith('worker-') &&
          !unmanaged.has(n.metadata.name) &&
          env.portal.machineOf(n.metadata.name)?.uuid,
      )
      .map(n => n.metadata.name)
      .sort()
      .slice(0, 3);
    assert.equal(NODES.length, 3, `three workers (${NODES.join(', ')})`);
    const FROM = versionOf(getJson('node', NODES[0]));
    assert.ok(FROM, `${NODES[0]}'s osImage names a Talos version`);
    const TARGET = targetAfter(FROM);
    const IMAGE = `${FACTORY}${SCHEMATIC}:${TARGET}`;
    const [, ALREADY] = NODES;
    const UPGRADED = NODES.filter(n => n !== ALREADY);

    // The talos channel (upgrades go over it), and a short installer run.
    env.portal.kubectl(
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
        const pp = getJson('powerproviders', 'default');
        return (
          pp.spec.type === 'talos' &&
          pp.status?.observedGeneration === pp.metadata.generation &&
          pp.status?.reboot === true
        );
      },
      { timeoutMs: 120_000 },
    );
    await talosControl('/upgrade', {
      method: 'PUT',
      body: JSON.stringify({ delayMs: 2_000 }),
    });

    // 1. One worker already at the target.
    await talosControl(`${machinePath(ALREADY)}/version`, {
      method: 'POST',
      body: JSON.stringify({ version: TARGET }),
    });
    await eventually(`${ALREADY} reports ${TARGET}`, () =>
      versionOf(getJson('node', ALREADY)) === TARGET ? true : undefined,
    );
    const before = Object.fromEntries(
      await Promise.all(
        NODES.map(async n => [
          n,
          (await talosControl(`${machinePath(n)}/upgrades`)).count,
        ]),
      ),
    );

    // 2. The plan dialog: Upgrade Talos, the target, the pre-flight with the skipped one.
    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    await openServersPage(page, env.portal, NODES[0]);
    for (const node of NODES) {
      await page.getByRole('checkbox', { name: `Select ${node}` }).check();
    }
    await page
      .getByRole('button', { name: 'Plan a rolling drain / reboot' })
      .click();
    const dialog = page.getByRole('dialog', {
      name: 'Plan a rolling drain / reboot of 3 servers',
    });
    await dialog.waitFor();
    await dialog.getByLabel('Upgrade Talos', { exact: true }).check();
    const source = dialog.getByRole('combobox', {
      name: /Installer image source/,
    });
    assert.equal((await source.innerText()).trim(), FACTORY);
    await dialog.getByTestId('install-rest').fill(`${SCHEMATIC}:${TARGET}`);
    assert.equal(
      (await dialog.getByTestId('install-shown').innerText()).trim(),
      `Image: ${IMAGE}`,
    );
    const skipped = dialog.getByTestId('plan-skipped');
    await skipped.waitFor();
    assert.match(await skipped.innerText(), /Already there: 1 skipped/);
    assert.match(
      await skipped.innerText(),
      new RegExp(`${ALREADY}: already at ${TARGET.replace(/\./g, '\\.')}`),
    );
    await eventually(
      'the plan pre-flight of the two others, one at a time',
      async () =>
        /^2 servers in 2 steps/.test(
          await dialog.getByTestId('plan-estimate-total').innerText(),
        ),
      { timeoutMs: 30_000, everyMs: 250 },
    );
    const steps = await dialog.getByTestId('plan-preflight-steps').innerText();
    assert.match(steps, new RegExp(`Step 1: ${UPGRADED[0]}`));
    assert.match(steps, new RegExp(`Step 2: ${UPGRADED[1]}`));
    assert.doesNotMatch(steps, new RegExp(ALREADY));
    if (await dialog.getByTestId('plan-blockers').isVisible()) {
      // A pod with an emptyDir volume on one of them: its eviction needs the option.
      await dialog.getByLabel('Also evict pods with emptyDir volumes').check();
      await dialog.getByTestId('plan-acknowledge').waitFor();
    }
    await assertAxeClean(t, page, 'the upgrade plan dialog', '[role="dialog"]');

    // 3. The ceremony: the count typed is of those it upgrades.
    const submit = dialog.getByRole('button', {
      name: 'Start rolling upgrade',
    });
    await dialog.getByTestId('plan-healthy-return').check();
    await dialog.getByTestId('plan-healthy-for-seconds').fill('5');
    await dialog.getByTestId('plan-reason').fill(REASON);
    await dialog.getByLabel('I have reviewed this impact').check();
    assert.equal(await submit.isDisabled(), true, 'no plan before the count');
    await dialog
      .getByLabel(/Type the number of servers to upgrade \(2\)/)
      .fill('2');
    await submit.click();
    const link = dialog.getByTestId('plan-created').getByRole('link');
    await link.waitFor();
    const planName = (await link.innerText()).trim();
    const created = getJson('maintenanceplans', planName);
    assert.deepEqual(created.spec.upgrade, { image: IMAGE });
    assert.deepEqual(created.spec.nodes, NODES);
    await link.click();

    await page.getByTestId('rackside-plan-page').waitFor();
    await signInIfAsked(page, page.getByTestId('plan-phase'));
    const counts = new Set();
    await eventually(
      `plan ${planName} Complete with 3 of 3 at ${TARGET}`,
      async () => {
        await page.reload();
        await page.getByTestId('plan-phase').waitFor();
        const phase = (await page.getByTestId('plan-phase').innerText()).trim();
        assert.ok(
          !['Failed', 'Cancelled'].includes(phase),
          `the plan ended ${phase}: ${await page
            .getByTestId('rackside-plan-page')
            .innerText()}`,
        );
        const versions = page.getByTestId('plan-versions');
        if ((await versions.count()) === 0) return false;
        const text = (await versions.innerText()).trim();
        counts.add(text);
        return phase === 'Complete' && text === `3 of 3 at ${TARGET}`;
      },
      { timeoutMs: 480_000, everyMs: 2000 },
    );
    t.diagnostic(`the plan page counted: ${[...counts].join(' | ')}`);
    assert.ok(
      [...counts].some(c => /^[12] of 3 at /.test(c)),
      `the page counted the plan's way there (${[...counts].join(', ')})`,
    );
    assert.match(
      await page.getByTestId(`plan-step-${ALREADY}`).innerText(),
      new RegExp(`Skipped[\\s\\S]*already at ${TARGET.replace(/\./g, '\\.')}`),
    );
    for (const node of UPGRADED) {
      assert.equal(
        (
          await page.getByTestId(`plan-step-versions-${node}`).innerText()
        ).trim(),
        `${FROM} → ${TARGET}`,
      );
    }
    await assertAxeClean(t, page, 'the upgrade plan page', 'main');

    // On the rack: one Upgrade to each upgraded machine, none to the one already there.
    for (const node of NODES) {
      const after = await talosControl(`${machinePath(node)}/upgrades`);
      assert.equal(
        after.count,
        before[node] + (node === ALREADY ? 0 : 1),
        `Upgrades sent to ${node}`,
      );
      assert.equal(versionOf(getJson('node', node)), TARGET);
    }
  },
);
