// Browser test of a maintenance plan (docs/plans.md) on the demo portal: a guest
// (plant-admins, who hold servers:plan) selects three workers with a BMC on /servers,
// opens "Plan a rolling drain / reboot", chooses Reboot, two at a time, reads the plan
// pre-flight (per step, per server, the estimate), gives the ceremony (reason,
// acknowledgement, the number of servers typed), follows the link to the plan page
// and watches it reach Complete; axe finds nothing serious on the selection, the dialog
// and the plan page. Then the cluster is checked with the admin
// kubeconfig: each node has exactly one NodeMaintenance of the plan, Complete, with one
// reboot sent over redfish, and its machine went off and on once.
// The fixture's payments budget (minAvailable 2) blocks every eviction by design (the
// operator's rack tests wait on it); this test deletes it first, so the plan can end
// unattended.
// Then two plans that must not be lighter than a single maintenance: a rolling reboot of
// the three control-plane members, whose every step consumes the last of the quorum
// margin, asks each member's name typed before it can be requested (and is cancelled
// from its page); and a plan whose authority lease has ended waits saying so until the
// guest renews it from the plan page, then runs.
// Its own port (7032) and a free rack network (claimRackNet), so it never meets the other tests.
//
//   node --test e2e/tests/servers-plan.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { binaries, writeTokenKubeconfig } from '../rack/rack.mjs';
import {
  eventually,
  formatViolations,
  openServersPage,
  portalAndBrowser,
  runAxe,
  serverRow,
  signInIfAsked,
  waitForRedfishReboot,
  waitForShopWorkloads,
} from './harness.mjs';

const SCREENSHOT =
  process.env.RACKSIDE_E2E_PLAN_SCREENSHOT ?? '/tmp/rackside-e2e-plan.png';
const REASON = 'e2e: kernel update of plant A, TICKET-19';

const env = portalAndBrowser({ offset: 25 }, { claimNet: true });

const getJson = (...args) => env.portal.getJson(...args);

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
  'a guest plans a rolling reboot of three workers and watches the plan reach Complete',
  { timeout: 600_000 },
  async t => {
    await waitForRedfishReboot(env.portal);
    await waitForShopWorkloads(env.portal);
    env.portal.kubectl('delete', 'pdb', 'payments', '-n', 'shop');

    // Three workers with a BMC and no unmanaged pod (worker-2's debug-shell needs force).
    const withBmc = getJson('serverbmcs').items.map(b => b.metadata.name);
    const pods = getJson('pods', '-A').items;
    const unmanaged = new Set(
      pods
        .filter(p => !(p.metadata.ownerReferences ?? []).length)
        .map(p => p.spec.nodeName),
    );
    const NODES = getJson('nodes')
      .items.map(n => n.metadata)
      .filter(
        m =>
          m.name.startsWith('worker-') &&
          withBmc.includes(m.name) &&
          !unmanaged.has(m.name),
      )
      .map(m => m.name)
      .sort()
      .slice(0, 3);
    assert.equal(
      NODES.length,
      3,
      `three workers to plan (${NODES.join(', ')})`,
    );
    const machines = NODES.map(n => env.portal.machineOf(n));
    const before = await Promise.all(
      machines.map(m => env.portal.machineCounts(m.uuid)),
    );
    t.diagnostic(`planning a rolling reboot of ${NODES.join(', ')}`);

    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      const row = await openServersPage(page, env.portal, NODES[0]);
      for (const node of NODES) {
        await page.getByRole('checkbox', { name: `Select ${node}` }).check();
      }
      assert.match(
        await page.getByTestId('plan-selected-plant-a').innerText(),
        /^3 selected/,
      );
      await assertAxeClean(t, page, 'the Servers page with a selection');
      await page
        .getByRole('button', { name: 'Plan a rolling drain / reboot' })
        .click();
      const dialog = page.getByRole('dialog', {
        name: 'Plan a rolling drain / reboot of 3 servers',
      });
      await dialog.waitFor();
      await dialog.getByLabel('Reboot', { exact: true }).check();
      await dialog.getByLabel('At most this many at a time').fill('2');
      const preflight = dialog.getByTestId('plan-preflight');
      await eventually(
        'the plan pre-flight of a reboot, two at a time',
        async () =>
          (await preflight.isVisible()) &&
          /in 2 steps/.test(
            await dialog.getByTestId('plan-estimate-total').innerText(),
          ),
        { timeoutMs: 30_000, everyMs: 250 },
      );
      // The shop's cache pod has an emptyDir volume: its eviction needs the option.
      if (await dialog.getByTestId('plan-blockers').isVisible()) {
        await dialog
          .getByLabel('Also evict pods with emptyDir volumes')
          .check();
        await dialog.getByTestId('plan-acknowledge').waitFor();
      }
      const steps = await dialog
        .getByTestId('plan-preflight-steps')
        .innerText();
      assert.match(steps, new RegExp(`Step 1: ${NODES[0]}, ${NODES[1]}`));
      assert.match(steps, new RegExp(`Step 2: ${NODES[2]}`));
      for (const node of NODES) {
        await dialog.getByTestId(`plan-preflight-node-${node}`).waitFor();
      }

      await assertAxeClean(t, page, 'the plan dialog', '[role="dialog"]');
      const submit = dialog.getByRole('button', {
        name: 'Start rolling reboot',
      });
      // Every step waits for a healthy return (60 s Ready by default); this plan asks 5 s.
      await dialog.getByTestId('plan-healthy-return').check();
      await dialog.getByTestId('plan-healthy-for-seconds').fill('5');
      await dialog.getByTestId('plan-reason').fill(REASON);
      await dialog.getByLabel('I have reviewed this impact').check();
      assert.equal(
        await submit.isDisabled(),
        true,
        'no plan before the number of servers is typed',
      );
      await dialog
        .getByLabel(/Type the number of servers to reboot \(3\)/)
        .fill('3');
      await submit.click();
      const link = dialog.getByTestId('plan-created').getByRole('link');
      await link.waitFor();
      const planName = (await link.innerText()).trim();
      await link.click();

      await page.getByTestId('rackside-plan-page').waitFor();
      await signInIfAsked(page, page.getByTestId('plan-phase'));
      const phases = new Set();
      await eventually(
        `plan ${planName} Complete`,
        async () => {
          const phase = (
            await page.getByTestId('plan-phase').innerText()
          ).trim();
          phases.add(phase);
          assert.ok(
            !['Failed', 'Cancelled'].includes(phase),
            `the plan ended ${phase}: ${await page
              .getByTestId('rackside-plan-page')
              .innerText()}`,
          );
          return phase === 'Complete';
        },
        { timeoutMs: 420_000, everyMs: 1000 },
      );
      t.diagnostic(`the plan page showed: ${[...phases].join(' | ')}`);
      assert.match(
        await page.getByTestId('plan-progress').innerText(),
        /^3 of 3 done/,
      );
      for (const node of NODES) {
        const step = page.getByTestId(`plan-step-${node}`);
        assert.match(await step.innerText(), /Done/);
        await step.getByRole('link').waitFor();
      }
      await assertAxeClean(t, page, 'the plan page', 'main');
      await page
        .screenshot({ path: SCREENSHOT, fullPage: true })
        .catch(() => {});

      // The cluster agrees: one Complete reboot per node, one power cycle each.
      const plan = getJson('maintenanceplans', planName);
      assert.equal(plan.status.phase, 'Complete');
      assert.equal(plan.spec.requestedBy, 'user:default/guest');
      assert.deepEqual(plan.spec.nodes, NODES);
      assert.equal(plan.spec.healthyReturn?.healthyForSeconds, 5);
      const ofPlan = getJson('nodemaintenances').items.filter(m =>
        (m.metadata.ownerReferences ?? []).some(
          r => r.kind === 'MaintenancePlan' && r.name === planName,
        ),
      );
      for (const [i, node] of NODES.entries()) {
        const mine = ofPlan.filter(m => m.spec.nodeName === node);
        assert.equal(mine.length, 1, `one maintenance of the plan for ${node}`);
        const [nm] = mine;
        assert.equal(nm.status?.phase, 'Complete');
        assert.equal(nm.spec.intent, 'reboot');
        assert.equal(nm.spec.requestedBy, 'user:default/guest');
        assert.equal(nm.status.power?.reboot?.channel, 'redfish');
        assert.deepEqual(Object.keys(nm.status.power), ['reboot']);
        const after = await env.portal.machineCounts(machines[i].uuid);
        assert.equal(
          after.powerOff - before[i].powerOff,
          1,
          `${node} off once`,
        );
        assert.equal(after.powerOn - before[i].powerOn, 1, `${node} on once`);
      }
      assert.ok(row, 'the Servers page showed the rows');
    } catch (error) {
      await page
        .screenshot({ path: SCREENSHOT, fullPage: true })
        .catch(() => {});
      throw error;
    } finally {
      await page.close();
    }
  },
);

test(
  'a control-plane reboot plan asks each member typed (the hazard ceremony per node) and records the rungs',
  { timeout: 300_000 },
  async t => {
    // The members the redfish channel can reboot (a ServerBMC each); with all three
    // members Ready, each of their steps takes the margin to 0: the hazard rung.
    const withBmc = getJson('serverbmcs').items.map(b => b.metadata.name);
    const CPS = getJson('nodes')
      .items.map(n => n.metadata)
      .filter(
        m =>
          Object.hasOwn(
            m.labels ?? {},
            'node-role.kubernetes.io/control-plane',
          ) && withBmc.includes(m.name),
      )
      .map(m => m.name)
      .sort();
    assert.ok(CPS.length >= 2, `control-plane members with a BMC: ${CPS}`);
    const N = CPS.length;
    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      // The browser is signed in already (the first test): sign in only if asked.
      await page.goto(`${env.portal.baseUrl}/servers`);
      await signInIfAsked(page, serverRow(page, CPS[0]));
      await serverRow(page, CPS[0]).waitFor({ timeout: 60_000 });
      for (const node of CPS) {
        await page.getByRole('checkbox', { name: `Select ${node}` }).check();
      }
      await page
        .getByRole('button', { name: 'Plan a rolling drain / reboot' })
        .click();
      const dialog = page.getByRole('dialog', {
        name: `Plan a rolling drain / reboot of ${N} servers`,
      });
      await dialog.getByLabel('Reboot', { exact: true }).check();
      // Each member alone, each consuming the last of the margin: a typed name each.
      const hazard = dialog.getByTestId('plan-hazard');
      await hazard.waitFor();
      for (const node of CPS) {
        await dialog.getByTestId(`plan-typed-name-${node}`).waitFor();
      }
      await assertAxeClean(
        t,
        page,
        'the plan dialog at the hazard rung',
        '[role="dialog"]',
      );
      if (await dialog.getByTestId('plan-blockers').isVisible()) {
        await dialog
          .getByLabel('Also evict pods with emptyDir volumes')
          .check();
        await dialog.getByTestId('plan-acknowledge').waitFor();
      }
      const submit = dialog.getByRole('button', {
        name: 'Start rolling reboot',
      });
      await dialog.getByTestId('plan-reason').fill(REASON);
      await dialog.getByLabel('I have reviewed this impact').check();
      await dialog
        .getByLabel(
          new RegExp(`Type the number of servers to reboot \\(${N}\\)`),
        )
        .fill(String(N));
      // Every name but the last typed, and one of them wrong: still no plan.
      await dialog.getByTestId(`plan-typed-name-${CPS[0]}`).fill(CPS[N - 1]);
      assert.equal(
        await submit.isDisabled(),
        true,
        'no plan before each hazard member is typed',
      );
      for (const node of CPS.slice(0, N - 1)) {
        await dialog.getByTestId(`plan-typed-name-${node}`).fill(node);
      }
      assert.equal(
        await submit.isDisabled(),
        true,
        'no plan before the last hazard member is typed',
      );
      await dialog
        .getByTestId(`plan-typed-name-${CPS[N - 1]}`)
        .fill(CPS[N - 1]);
      await submit.click();
      const link = dialog.getByTestId('plan-created').getByRole('link');
      await link.waitFor();
      const planName = (await link.innerText()).trim();
      const plan = getJson('maintenanceplans', planName);
      assert.deepEqual(
        plan.spec.acknowledged,
        Object.fromEntries(CPS.map(n => [n, 'hazard'])),
      );
      assert.equal(plan.spec.authorization.by, 'user:default/guest');

      // Cancelled from its page: the running step finishes, the rest are skipped.
      await link.click();
      await page.getByTestId('rackside-plan-page').waitFor();
      await signInIfAsked(page, page.getByTestId('plan-phase'));
      await page.getByTestId('plan-cancel').click();
      await page
        .getByTestId('plan-cancel-reason')
        .fill(`${REASON}: not tonight`);
      await page.getByTestId('plan-cancel-submit').click();
      await eventually(
        `plan ${planName} Cancelled`,
        async () =>
          (await page.getByTestId('plan-phase').innerText()).trim() ===
          'Cancelled',
        { timeoutMs: 240_000, everyMs: 1000 },
      );
      assert.equal(
        getJson('maintenanceplans', planName).spec.cancel.by,
        'user:default/guest',
      );
    } catch (error) {
      await page
        .screenshot({ path: SCREENSHOT, fullPage: true })
        .catch(() => {});
      throw error;
    } finally {
      await page.close();
    }
  },
);

test(
  'a plan whose authority ended waits saying so; the guest renews it from the plan page and it runs',
  { timeout: 300_000 },
  async t => {
    // A worker whose drain needs no data-loss option: no unmanaged pod, no emptyDir or
    // hostPath volume outside DaemonSets (the first test deleted the payments budget).
    const pods = getJson('pods', '-A').items;
    const needsOptions = new Set(
      pods
        .filter(p => {
          const owners = p.metadata.ownerReferences ?? [];
          if (owners.some(o => o.kind === 'DaemonSet')) return false;
          return (
            owners.length === 0 ||
            (p.spec.volumes ?? []).some(v => v.emptyDir || v.hostPath)
          );
        })
        .map(p => p.spec.nodeName),
    );
    const node = getJson('nodes')
      .items.map(n => n.metadata.name)
      .filter(n => n.startsWith('worker-') && !needsOptions.has(n))
      .sort()
      .pop();
    assert.ok(node, 'a worker whose drain needs no data-loss option');
    // Written as the portal's own ServiceAccount (the only writer of authorization),
    // with a lease that ended a minute ago: what a plan looks like when its window
    // opens after the lease.
    const rack = env.portal.rackInfo();
    const kubeconfig = writeTokenKubeconfig({
      server: rack.server,
      caFile: rack.caFile,
      token: fs
        .readFileSync(path.join(env.portal.rackDir, 'backstage.token'), 'utf8')
        .trim(),
      file: path.join(env.portal.rackDir, 'e2e-backstage.kubeconfig'),
    });
    const now = Date.now();
    const name = `e2e-lease-${now.toString(36)}`;
    const plan = {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'MaintenancePlan',
      metadata: { name },
      spec: {
        intent: 'drain',
        nodes: [node],
        reason: REASON,
        requestedBy: 'user:default/guest',
        acknowledged: { [node]: 'preflight' },
        authorization: {
          by: 'user:default/guest',
          at: new Date(now - 3_600_000).toISOString(),
          until: new Date(now - 60_000).toISOString(),
        },
      },
    };
    execFileSync(
      binaries().kubectl,
      ['--kubeconfig', kubeconfig, 'create', '-f', '-'],
      {
        input: JSON.stringify(plan),
        encoding: 'utf8',
      },
    );
    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      await page.goto(`${env.portal.baseUrl}/servers/plans/plant-a/${name}`);
      await page.getByTestId('rackside-plan-page').waitFor();
      await signInIfAsked(page, page.getByTestId('plan-phase'));
      const waiting = page.getByTestId('plan-waiting');
      await eventually(
        'the plan waits on its authorization',
        async () =>
          (await waiting.isVisible()) &&
          /authorization/i.test(await waiting.innerText()),
        { timeoutMs: 60_000, everyMs: 500 },
      );
      assert.equal(
        getJson('nodes', node).spec.unschedulable ?? false,
        false,
        'no step started after the lease ended',
      );
      await assertAxeClean(
        t,
        page,
        'the plan page waiting on its authorization',
        'main',
      );
      await page.getByTestId('plan-renew').click();
      await page
        .getByTestId('plan-renew-reason')
        .fill(`${REASON}: window opens`);
      await page.getByTestId('plan-renew-submit').click();
      await eventually(
        `plan ${name} Complete after the renewal`,
        async () => {
          const phase = (
            await page.getByTestId('plan-phase').innerText()
          ).trim();
          assert.ok(
            !['Failed', 'Cancelled'].includes(phase),
            `the plan ended ${phase}`,
          );
          return phase === 'Complete';
        },
        { timeoutMs: 240_000, everyMs: 1000 },
      );
      const renewed = getJson('maintenanceplans', name).spec.authorization;
      assert.equal(renewed.by, 'user:default/guest');
      assert.ok(Date.parse(renewed.until) > now, 'the lease was extended');
    } catch (error) {
      await page
        .screenshot({ path: SCREENSHOT, fullPage: true })
        .catch(() => {});
      throw error;
    } finally {
      await page.close();
    }
  },
);
