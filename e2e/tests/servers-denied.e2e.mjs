// Browser test of a user whose group is denied servers:cordon: the contractor
// of examples/org.yaml is a plant engineer (allowed to cordon plant-a's
// workers) and also in group contractors, whose deny line in app-config's
// permission.rackside wins. The Servers page offers no Cordon, and a direct
// API call gets 403 with nothing written.
// Its own rack (net 191) and port (7008), so it never meets servers.e2e.mjs.
//
//   node --test e2e/tests/*.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  apiAsSignedInUser,
  openServersPage,
  portalAndBrowser,
  readRow,
} from './harness.mjs';

const NODE = 'worker-1';

const env = portalAndBrowser({ offset: 1, user: 'contractor' });

const maintenances = () =>
  env.portal.kubectl('get', 'nodemaintenances', '-A', '-o', 'name').trim();

test(
  'a user whose group is denied servers:cordon sees no Cordon and gets 403 from the API',
  { timeout: 300_000 },
  async () => {
    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      const row = await openServersPage(page, env.portal, NODE);
      // The row is there and readable, but offers no Cordon.
      assert.equal((await readRow(row)).schedulable, 'Schedulable');
      assert.equal(
        await row.getByRole('button', { name: `Cordon ${NODE}` }).count(),
        0,
        'no Cordon action for a denied user',
      );
      assert.equal(
        await page.getByRole('button', { name: /^Cordon / }).count(),
        0,
        'no Cordon action on any row',
      );

      // The same user's token, straight at the API.
      const existing = maintenances();
      const res = await apiAsSignedInUser(
        page,
        'POST',
        `/api/servers/clusters/plant-a/servers/${NODE}/actions/cordon`,
        { reason: 'e2e: denied user tries anyway' },
      );
      assert.equal(res.status, 403, res.body);
      assert.match(res.body, /servers:cordon/);

      // Nothing written: no NodeMaintenance, node still schedulable.
      assert.equal(maintenances(), existing);
      assert.equal(
        env.portal
          .kubectl('get', 'node', NODE, '-o', 'jsonpath={.spec.unschedulable}')
          .trim(),
        '',
      );
    } finally {
      await page.close();
    }
  },
);
