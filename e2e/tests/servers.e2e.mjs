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
  serverRow,
  signInIfAsked,
  tableOverflow,
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

/** /servers in `page`, signed in if the context is not yet, until worker-1's row. */
async function openSignedIn(page) {
  await page.goto(`${env.portal.baseUrl}/servers`);
  const row = serverRow(page, NODE);
  await signInIfAsked(page, row);
  await row.waitFor({ timeout: 60_000 });
}

test(
  "a new tab straight to /servers asks the clusters and the first window before the page's code has arrived",
  { timeout: 180_000 },
  async () => {
    // Signed in once, as a user who opens the portal in a new tab.
    const first = await env.newPage();
    try {
      await openSignedIn(first);
    } finally {
      await first.close();
    }

    const page = await env.newPage();
    try {
      const events = [];
      const chunks = [];
      page.on('request', req => events.push(['request', req.url()]));
      page.on('response', res => {
        events.push(['response', res.url()]);
        if (res.url().endsWith('.chunk.js'))
          chunks.push(
            res.text().then(
              body => ({ url: res.url(), body }),
              () => ({ url: res.url(), body: '' }),
            ),
          );
      });
      await openSignedIn(page);
      // The table's windowing counts on fixed-height rows (ServerTable's
      // ROW_HEIGHT): nothing in a row's cells may make it taller.
      const heights = await page
        .locator('[data-testid="server-row"]')
        .evaluateAll(rows =>
          rows.map(r => Math.round(r.getBoundingClientRect().height)),
        );
      assert.ok(heights.length > 0, 'rows drawn');
      assert.deepEqual(
        heights.filter(h => h !== 56),
        [],
        `every server row is 56 px tall (${heights.join(', ')})`,
      );
      const fetched = await Promise.all(chunks);
      const pageChunks = fetched
        .filter(c => c.body.includes('rackside-servers-page'))
        .map(c => c.url);
      assert.equal(pageChunks.length, 1, 'one chunk holds the Servers page');
      // A chunk of its own: the Servers page loads no other page's code.
      assert.deepEqual(
        fetched
          .filter(c => c.body.includes('rackside-add-node-page'))
          .map(c => c.url),
        [],
        'the Add node page is not loaded with the Servers page',
      );
      const at = (kind, match) =>
        events.findIndex(([k, url]) => k === kind && match(url));
      const chunkArrived = at('response', url => url === pageChunks[0]);
      const clusters = at('request', url =>
        /\/api\/servers\/clusters(\?|$)/.test(url),
      );
      const firstWindow = at('request', url =>
        /\/api\/servers\/clusters\/[^/]+\/servers\?/.test(url),
      );
      assert.ok(chunkArrived >= 0, "the page's chunk was fetched");
      // Asked by the page's loader (pageStart.ts), not once the page's code
      // has arrived, evaluated and rendered.
      assert.ok(
        clusters >= 0 && clusters < chunkArrived,
        `/clusters is asked (event ${clusters}) before the page's chunk arrives (event ${chunkArrived})`,
      );
      assert.ok(
        firstWindow > clusters,
        'the first window follows the clusters',
      );
      assert.equal(
        events.filter(
          ([k, url]) =>
            k === 'request' && /\/api\/servers\/clusters(\?|$)/.test(url),
        ).length,
        1,
        'the page took the answer the loader asked for: /clusters once',
      );
    } finally {
      await page.close();
    }
  },
);

test(
  'the servers table fits its card at 1,280, 1,600 and 1,920 px, every header readable, the selection column too',
  { timeout: 180_000 },
  async () => {
    const page = await env.newPage();
    try {
      await openSignedIn(page);
      // The guest may plan: the table has its selection column.
      await page
        .getByRole('columnheader', { name: 'Select' })
        .first()
        .waitFor();
      for (const width of [1280, 1600, 1920]) {
        await page.setViewportSize({ width, height: 900 });
        await page.evaluate(
          () =>
            new Promise(r =>
              requestAnimationFrame(() => requestAnimationFrame(r)),
            ),
        );
        assert.deepEqual(await tableOverflow(page), [], `at ${width} px`);
      }
    } finally {
      await page.close();
    }
  },
);
