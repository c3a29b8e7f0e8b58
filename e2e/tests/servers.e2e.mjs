// Browser test of the Servers page against the demo portal on a simulated
// rack: guest sign-in, cordon worker-1 with a reason, return it to service.
// Runs headless Debian Chromium through playwright-core (no downloaded browser).
//
//   node --test e2e/tests/*.e2e.mjs
//
// Environment: RACKSIDE_E2E_CHROMIUM (default /usr/bin/chromium),
// RACKSIDE_E2E_SCREENSHOT (default /tmp/rackside-e2e.png), plus harness.mjs's.
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import { launchBrowser, startPortal } from './harness.mjs';

const SCREENSHOT =
  process.env.RACKSIDE_E2E_SCREENSHOT ?? '/tmp/rackside-e2e.png';
const NODE = 'worker-1';

let portal;
let browser;
let chrome;

before(
  async () => {
    portal = await startPortal();
    chrome = await launchBrowser();
    browser = chrome.context;
  },
  { timeout: 600_000 },
);

after(async () => {
  await chrome?.close();
  await portal?.stop();
});

const unschedulable = () =>
  portal
    .kubectl('get', 'node', NODE, '-o', 'jsonpath={.spec.unschedulable}')
    .trim();

/** Polls fn until it returns a truthy value. */
async function eventually(what, fn, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  let last;
  for (;;) {
    last = await fn();
    if (last) return last;
    if (Date.now() > deadline)
      assert.fail(`${what}: not reached in ${timeoutMs} ms`);
    await new Promise(r => setTimeout(r, 1000));
  }
}

test(
  'a guest cordons worker-1 and returns it to service from /servers',
  { timeout: 300_000 },
  async () => {
    assert.equal(unschedulable(), '', `${NODE} starts schedulable`);

    const page = await browser.newPage();
    page.setDefaultTimeout(30_000);
    try {
      await page.goto(`${portal.baseUrl}/servers`);

      // Guest sign-in.
      await page.getByRole('button', { name: 'Enter' }).click();

      const row = page.locator(
        `[data-testid="server-row"][data-node="${NODE}"]`,
      );
      await row.waitFor({ timeout: 60_000 });

      // Cordon with a reason.
      await row.getByRole('button', { name: `Cordon ${NODE}` }).click();
      let dialog = page.getByRole('dialog');
      await dialog
        .getByTestId('action-reason')
        .fill('e2e: firmware check, TICKET-1');
      await dialog.getByRole('button', { name: 'Cordon', exact: true }).click();
      await dialog.waitFor({ state: 'detached' });

      await row
        .getByText('Cordoned', { exact: false })
        .first()
        .waitFor({ timeout: 60_000 });
      // The maintenance column shows the phase Cordoned (not only the chip).
      await eventually('phase Cordoned in the row', async () =>
        /Cordoned/.test((await row.locator('td').nth(5).innerText()).trim()),
      );
      await eventually(
        `${NODE} unschedulable in the cluster`,
        () => unschedulable() === 'true',
      );

      // Return to service with a reason.
      await row
        .getByRole('button', { name: `Return to service ${NODE}` })
        .click();
      dialog = page.getByRole('dialog');
      await dialog
        .getByTestId('action-reason')
        .fill('e2e: check done, TICKET-1');
      await dialog
        .getByRole('button', { name: 'Return to service', exact: true })
        .click();
      await dialog.waitFor({ state: 'detached' });

      await eventually(
        'maintenance Complete or gone in the row',
        async () => {
          const text = (await row.locator('td').nth(5).innerText()).trim();
          return text === '—' || /Complete/.test(text);
        },
        90_000,
      );
      await eventually(
        'Schedulable in the row',
        async () =>
          (await row.locator('td').nth(4).innerText()).trim() === 'Schedulable',
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
