// Browser test of what the hardware says (issue 40, docs/hardware-health.md): the Servers
// page's Health column shows a Critical server (and sorts and filters on it), the
// server's Server tab shows its failed parts, its event log and its firmware, and
// Refresh answers (202, then the 429 of the once-a-minute limit, with its message).
//
// The operator's reading of the BMCs is built on another branch (issue-40-operator). This
// test does not wait for it: it writes ServerBMC.status.health itself, through the
// Kubernetes status subresource as the rack admin (as the operator would), and checks
// what the portal makes of it. Once the operator reads the rack's BMCs, its sweep may
// replace that reading; the test then should fail a power supply through the rack's BMC
// control API instead of writing the status.
// Its own rack (a claimed network) and port (offset 27).
//
//   node --test e2e/tests/servers-health.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apiAsSignedInUser,
  catalogLinkOf,
  eventually,
  openServersPage,
  portalAndBrowser,
  reloadUntil,
} from './harness.mjs';

const env = portalAndBrowser({ offset: 27 }, { claimNet: true });

/** A reading as the operator writes it: a failed power supply and a fan, the SEL, firmware. */
function criticalReading(readAt) {
  return {
    rollup: 'Critical',
    state: 'Enabled',
    readAt,
    parts: [
      {
        kind: 'PowerSupply',
        name: 'PSU 1',
        health: 'Critical',
        state: 'Enabled',
        message: 'input lost',
      },
      { kind: 'Fan', name: 'Fan 3', health: 'Warning', state: 'Enabled' },
    ],
    logEntries: [
      {
        id: '41',
        created: readAt,
        severity: 'Critical',
        message: 'Power supply 1 input lost (e2e)',
        service: 'System',
      },
    ],
    firmware: [
      { name: 'BIOS', version: '2.19.1-e2e', updateable: true },
      { name: 'BMC', version: '7.10.30', updateable: true },
    ],
    missing: [],
  };
}

test(
  'the Health column shows a Critical server; its Server tab shows the parts, the log and the firmware; Refresh answers once a minute',
  { timeout: 420_000 },
  async () => {
    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    const { portal } = env;
    try {
      const withBmc = portal
        .getJson('serverbmcs')
        .items.map(b => b.metadata.name);
      const node = withBmc.find(n => n.startsWith('worker-')) ?? withBmc[0];
      assert.ok(node, `a node with a ServerBMC (${withBmc.join(', ')})`);
      const before = portal.getJson('serverbmcs', node);

      // The reading, written as the operator writes it: status subresource, admin.
      portal.kubectl(
        'patch',
        'serverbmc',
        node,
        '--subresource=status',
        '--type=merge',
        '-p',
        JSON.stringify({
          status: { health: criticalReading(new Date().toISOString()) },
        }),
      );

      // The Servers page: the row says Critical with the age of the reading.
      const row = await openServersPage(page, portal, node);
      const cell = row.getByTestId('health-cell');
      await reloadUntil(
        page,
        row,
        `${node}'s Health cell says Critical`,
        async () =>
          /^Critical · (just now|\d+ min ago)$/.test(
            (await cell.innerText()).trim(),
          ),
      );

      // Sorted by Health the Critical server comes first; filtered, it is alone.
      await page
        .getByRole('columnheader', { name: 'Health' })
        .getByRole('button')
        .click();
      await eventually(
        'the Critical server sorted first',
        async () =>
          (await page
            .getByTestId('server-row')
            .first()
            .getAttribute('data-node')) === node,
      );
      await page
        .getByRole('textbox', { name: /Filter servers of/ })
        .fill('critical');
      await eventually('only the Critical server left', async () => {
        const nodes = await page
          .getByTestId('server-row')
          .evaluateAll(rows => rows.map(r => r.getAttribute('data-node')));
        return nodes.length === 1 && nodes[0] === node;
      });

      // The server's Server tab: the failed parts, the event log, the firmware.
      await catalogLinkOf(page, portal, node);
      await page.goto(
        `${portal.baseUrl}/catalog/default/resource/plant-a--${node}/server`,
      );
      const card = page.getByTestId('entity-server-hardware');
      await card.waitFor();
      assert.equal(
        (await card.getByTestId('hardware-rollup').innerText()).trim(),
        'Critical',
      );
      const parts = card.getByRole('table', { name: 'Failed parts' });
      assert.match(await parts.innerText(), /PSU 1/);
      assert.match(await parts.innerText(), /input lost/);
      assert.match(await parts.innerText(), /Fan 3/);
      assert.match(
        await card.getByRole('table', { name: 'Event log' }).innerText(),
        /Power supply 1 input lost \(e2e\)/,
      );
      assert.match(
        await card.getByRole('table', { name: 'Firmware' }).innerText(),
        /2\.19\.1-e2e/,
      );

      // Refresh: asked (202) and written on the ServerBMC with the signed-in user...
      await card.getByRole('button', { name: 'Refresh' }).click();
      await eventually('the refresh was requested', async () =>
        /Reading requested at/.test(
          await card
            .getByRole('alert')
            .innerText()
            .catch(() => ''),
        ),
      );
      const asked = portal.getJson('serverbmcs', node);
      assert.equal(asked.spec.healthRefresh?.requestedBy, 'user:default/guest');
      // ...and nothing else of the ServerBMC changed (the backend writes only the request).
      assert.equal(asked.spec.address, before.spec.address);
      assert.deepEqual(
        asked.spec.credentialsSecretRef,
        before.spec.credentialsSecretRef,
      );

      // Again within the minute: the 429's message, nothing written.
      await card.getByRole('button', { name: 'Refresh' }).click();
      await eventually('the 429 says when to ask again', async () =>
        /ask again after .* \(in \d+ s\)/.test(
          await card
            .getByRole('alert')
            .innerText()
            .catch(() => ''),
        ),
      );
      assert.equal(
        portal.getJson('serverbmcs', node).spec.healthRefresh.requestedAt,
        asked.spec.healthRefresh.requestedAt,
      );

      // Two requests at once through the API (two clicks in two tabs): both refused
      // within the minute, the request on the ServerBMC unchanged.
      const url = `/api/servers/clusters/plant-a/servers/${node}/health/refresh`;
      const twice = await Promise.all([
        apiAsSignedInUser(page, 'POST', url, {}),
        apiAsSignedInUser(page, 'POST', url, {}),
      ]);
      assert.deepEqual(
        twice.map(r => r.status),
        [429, 429],
      );
      assert.equal(
        portal.getJson('serverbmcs', node).spec.healthRefresh.requestedAt,
        asked.spec.healthRefresh.requestedAt,
      );
    } finally {
      await page
        .screenshot({ path: '/tmp/rackside-e2e-health.png', fullPage: true })
        .catch(() => {});
      await page.close();
    }
  },
);
