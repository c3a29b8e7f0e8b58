// Browser test with the backend on a real PostgreSQL server (app-config.production.yaml):
// the catalog provider publishes the rack's servers into PostgreSQL, the Servers page links
// a server to its entity, and a guest cordons worker-1 and returns it to service. The
// PostgreSQL server is Debian's (installed with apt-get when missing), started on
// 127.0.0.1 in a temporary directory for this file (e2e/tests/postgres.mjs).
// Its own port (7030, offset 23) and a rack network claimed with the rack tests' lock files
// (rack networks end at 200, so not 190 + offset).
//
//   node --test e2e/tests/servers-postgres.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import path from 'node:path';
import {
  actWithReason,
  catalogLinkOf,
  eventually,
  openServersPage,
  portalAndBrowser,
  ROOT,
  serverRow,
  waitForRow,
} from './harness.mjs';
import { startPostgres } from './postgres.mjs';

const NODE = 'worker-1';
const ENTITY = `resource:default/plant-a--${NODE}`;

let pg;

// The PostgreSQL server first: the portal's backend is configured for it.
const env = portalAndBrowser(
  async () => {
    pg = await startPostgres();
    return {
      offset: 23,
      configs: [path.join(ROOT, 'app-config.production.yaml')],
      backendEnv: {
        POSTGRES_HOST: pg.host,
        POSTGRES_PORT: String(pg.port),
        POSTGRES_USER: pg.user,
        POSTGRES_PASSWORD: pg.password,
      },
    };
  },
  { claimNet: true, cleanup: () => pg?.stop() },
);

const unschedulable = () =>
  env.portal
    .kubectl('get', 'node', NODE, '-o', 'jsonpath={.spec.unschedulable}')
    .trim();

test('the backend keeps its data in PostgreSQL: a database per plugin, the catalog in it', async () => {
  const databases = pg
    .psql('postgres', 'SELECT datname FROM pg_database ORDER BY datname')
    .split('\n');
  assert.ok(
    databases.includes('backstage_plugin_catalog'),
    databases.join(', '),
  );
  // The catalog provider's entity of worker-1 is a row of the catalog's database.
  await eventually(
    `${ENTITY} in PostgreSQL`,
    async () =>
      pg.psql(
        'backstage_plugin_catalog',
        `SELECT count(*) FROM refresh_state WHERE entity_ref = '${ENTITY}'`,
      ) === '1',
    { timeoutMs: 120_000, everyMs: 2000, retryErrors: true },
  );
});

test(
  'with the catalog provider on PostgreSQL, a guest follows worker-1 to its entity, cordons it and returns it to service',
  { timeout: 300_000 },
  async () => {
    assert.equal(unschedulable(), '', `${NODE} starts schedulable`);
    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      await openServersPage(page, env.portal, NODE);
      // The row links to the catalog entity, read back from PostgreSQL.
      const link = await catalogLinkOf(page, env.portal, NODE);
      assert.equal(
        await link.getAttribute('href'),
        `/catalog/default/resource/plant-a--${NODE}`,
      );
      const row = serverRow(page, NODE);

      await actWithReason(page, row, {
        action: 'Cordon',
        node: NODE,
        reason: 'e2e on PostgreSQL: TICKET-20',
      });
      await waitForRow(row, 'phase Cordoned in the row', r =>
        /Cordoned/.test(r.maintenance),
      );
      await eventually(
        `${NODE} unschedulable in the cluster`,
        async () => unschedulable() === 'true',
      );

      await actWithReason(page, row, {
        action: 'Return to service',
        node: NODE,
        reason: 'e2e on PostgreSQL: done',
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
    } finally {
      await page.close();
    }
  },
);
