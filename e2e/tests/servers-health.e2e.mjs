// Browser test of what the hardware says (issue 40, docs/hardware-health.md): a power
// supply fails on a rack BMC (the rack's health proxy, through its control API) and a SEL
// entry is written; Refresh on the server's Server tab asks the operator for a reading
// (202), whose answer shows the failed part, the log entry and the firmware; the Servers
// page's Health column shows the server Critical and sorts and filters on it; a second
// Refresh within the minute, and two requests at once, are the 429 with its message.
// Nothing writes ServerBMC.status.health but the operator.
// Its own rack (a claimed network) and port (offset 27).
//
//   node --test e2e/tests/servers-health.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apiAsSignedInUser,
  catalogLinkOf,
  eventually,
  portalAndBrowser,
  reloadUntil,
  serverRow,
  signInIfAsked,
} from './harness.mjs';

const env = portalAndBrowser({ offset: 27 }, { claimNet: true });

/** The rack BMC's control API (e2e/rack/README.md, "Redfish BMCs"). */
async function bmcControl(portal, uuid, what, body) {
  const res = await fetch(
    `${portal.rackInfo().redfish.healthControlUrl}/health/${uuid}/${what}`,
    {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    },
  );
  assert.ok(res.ok, `BMC control ${what}: ${res.status}`);
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
      const machine = portal.machineOf(node);
      assert.ok(machine?.uuid, `${node}'s machine in the rack`);

      // The hardware fails: a power supply, and the BMC logs it.
      await bmcControl(portal, machine.uuid, 'part', {
        kind: 'PowerSupply',
        name: 'PSU1',
        health: 'Critical',
      });
      await bmcControl(portal, machine.uuid, 'log', {
        message: 'Power supply PSU1 input lost (e2e)',
        severity: 'Critical',
      });

      // The server's Server tab: Refresh asks the operator for a reading now.
      await catalogLinkOf(page, portal, node);
      await page.goto(
        `${portal.baseUrl}/catalog/default/resource/plant-a--${node}/server`,
      );
      const card = page.getByTestId('entity-server-hardware');
      await card.waitFor();
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
      // The backend wrote only the request: the address and credentials are as they were.
      assert.equal(asked.spec.address, before.spec.address);
      assert.deepEqual(
        asked.spec.credentialsSecretRef,
        before.spec.credentialsSecretRef,
      );

      // The operator's answer, read again by the card: the part, the log, the firmware.
      await eventually(
        "the operator's reading answers the refresh",
        async () =>
          portal.getJson('serverbmcs', node).status?.health
            ?.answeredRequestAt === asked.spec.healthRefresh.requestedAt,
        { timeoutMs: 60_000 },
      );
      await eventually(
        'the card shows Critical',
        async () =>
          (await card.getByTestId('hardware-rollup').innerText()).trim() ===
          'Critical',
        { timeoutMs: 60_000 },
      );
      const parts = card.getByRole('table', { name: 'Failed parts' });
      assert.match(await parts.innerText(), /PSU1/);
      assert.match(
        await card.getByRole('table', { name: 'Event log' }).innerText(),
        /Power supply PSU1 input lost \(e2e\)/,
      );
      assert.match(
        await card.getByRole('table', { name: 'Firmware' }).innerText(),
        /BIOS/,
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

      // Two requests at once through the API (two tabs): both refused within the
      // minute, the request on the ServerBMC unchanged.
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

      // The Servers page: the row says Critical with the age of the reading.
      // Signed in already (the catalog page): open the page, sign in only if asked.
      await page.goto(`${portal.baseUrl}/servers`);
      const row = serverRow(page, node);
      await signInIfAsked(page, row);
      await row.waitFor({ timeout: 60_000 });
      const cell = row.getByTestId('health-cell');
      await reloadUntil(
        page,
        row,
        `${node}'s Health cell says Critical`,
        async () =>
          /^Critical\s+(just now|\d+ min ago)$/.test(
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
    } finally {
      await page
        .screenshot({ path: '/tmp/rackside-e2e-health.png', fullPage: true })
        .catch(() => {});
      await page.close();
    }
  },
);
