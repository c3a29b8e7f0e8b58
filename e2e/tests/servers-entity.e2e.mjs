// Browser test of the catalog link: a server of the Servers page links to the
// Resource entity the catalog module publishes for it, whose Server tab shows
// the server's state and the actions the signed-in user may request; a
// hand-written chassis entity (examples/chassis.yaml) annotated with the same
// rackside.dev annotations gets the same tab.
// Its own rack (net 193) and port (7010).
//
//   node --test e2e/tests/*.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { catalogLinkOf, portalAndBrowser, signIn } from './harness.mjs';

const NODE = 'worker-1';

const env = portalAndBrowser({ offset: 3 });

test(
  'a server links to its catalog entity, whose Server tab shows it',
  { timeout: 300_000 },
  async () => {
    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      await page.goto(`${env.portal.baseUrl}/servers`);
      await signIn(page);

      // The catalog publishes the rack's servers shortly after start; the
      // link appears once the entity exists (reload to ask again).
      const link = await catalogLinkOf(page, env.portal, NODE);
      assert.equal(
        await link.getAttribute('href'),
        `/catalog/default/resource/plant-a--${NODE}`,
      );
      await link.click();
      await page.waitForURL(/\/catalog\/default\/resource\/plant-a--worker-1/);

      // The entity page's tabs are links in the new header, tabs in the old.
      await page
        .getByRole('tab', { name: 'Server', exact: true })
        .or(page.getByRole('link', { name: 'Server', exact: true }))
        .click();
      await page.waitForURL(/\/server$/);
      const state = page.getByTestId('entity-server-state');
      await state.waitFor();
      assert.match(await state.innerText(), /worker-1/);
      assert.match(await state.innerText(), /Schedulable/);
      const actions = page.getByTestId('entity-server-actions');
      assert.ok(
        (await actions.getByRole('listitem').allInnerTexts()).includes(
          'Cordon',
        ),
        'the admin guest may cordon worker-1',
      );
      assert.match(
        await page.getByTestId('entity-server-maintenance').innerText(),
        /No maintenance in progress/,
      );

      // The hand-written chassis of worker-2 has the same tab.
      await page.goto(
        `${env.portal.baseUrl}/catalog/default/resource/hall-1-rack-3-u12/server`,
      );
      await page.getByTestId('entity-server-state').waitFor();
      assert.match(
        await page.getByTestId('entity-server-state').innerText(),
        /worker-2/,
      );
    } finally {
      await page
        .screenshot({ path: '/tmp/rackside-e2e-entity.png', fullPage: true })
        .catch(() => {});
      await page.close();
    }
  },
);
