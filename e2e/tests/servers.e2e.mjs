// Browser test of the Servers page against the demo portal on a simulated
// rack: guest sign-in, cordon worker-1 with a reason, return it to service.
// Runs headless Debian Chromium through playwright-core (no downloaded browser).
//
//   node --test e2e/tests/*.e2e.mjs
//
// Environment: RACKSIDE_E2E_CHROMIUM (default /usr/bin/chromium),
// RACKSIDE_E2E_SCREENSHOT (default /tmp/rackside-e2e.png), plus harness.mjs's.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  actWithReason,
  eventually,
  openServersPage,
  portalAndBrowser,
  waitForRow,
} from './harness.mjs';

const SCREENSHOT =
  process.env.RACKSIDE_E2E_SCREENSHOT ?? '/tmp/rackside-e2e.png';
const NODE = 'worker-1';

const env = portalAndBrowser();

const unschedulable = () =>
  env.portal
    .kubectl('get', 'node', NODE, '-o', 'jsonpath={.spec.unschedulable}')
    .trim();

test(
  'a guest cordons worker-1 and returns it to service from /servers',
  { timeout: 300_000 },
  async () => {
    assert.equal(unschedulable(), '', `${NODE} starts schedulable`);

    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      const row = await openServersPage(page, env.portal, NODE);

      // Cordon with a reason.
      await actWithReason(page, row, {
        action: 'Cordon',
        node: NODE,
        reason: 'e2e: firmware check, TICKET-1',
      });

      await row
        .getByText('Cordoned', { exact: false })
        .first()
        .waitFor({ timeout: 60_000 });
      // The maintenance column shows the phase Cordoned (not only the chip).
      await waitForRow(row, 'phase Cordoned in the row', r =>
        /Cordoned/.test(r.maintenance),
      );
      await eventually(
        `${NODE} unschedulable in the cluster`,
        async () => unschedulable() === 'true',
      );

      // Return to service with a reason.
      await actWithReason(page, row, {
        action: 'Return to service',
        node: NODE,
        reason: 'e2e: check done, TICKET-1',
      });

      await waitForRow(
        row,
        'maintenance Complete or gone in the row',
        r => r.maintenance === '—' || /Complete/.test(r.maintenance),
        { timeoutMs: 90_000 },
      );
      await waitForRow(
        row,
        'Schedulable in the row',
        r => r.schedulable === 'Schedulable',
      );
      assert.equal(unschedulable(), '', `${NODE} schedulable again`);
      assert.equal(
        await row.getByRole('button', { name: `Cordon ${NODE}` }).count(),
        1,
        'cordon is offered again',
      );
    } finally {
      await page
        .screenshot({ path: SCREENSHOT, fullPage: true })
        .catch(() => {});
      await page.close();
    }
  },
);
