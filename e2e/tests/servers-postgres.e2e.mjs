// Browser test with the backend on a real PostgreSQL server (app-config.production.yaml):
// the catalog provider publishes the rack's servers into PostgreSQL, the Servers page links
// a server to its entity, and a guest cordons worker-1 and returns it to service. The
// PostgreSQL server is Debian's (installed with apt-get when missing), started on
// 127.0.0.1 in a temporary directory for this file (e2e/tests/postgres.mjs).
// Its own port (7030, offset 23) and a rack network claimed with the rack tests' lock files
// (rack networks end at 200, so not 190 + offset).
//
//   node --test e2e/tests/servers-postgres.e2e.mjs
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import { cacheDir } from '../rack/rack.mjs';
import {
  eventually,
  launchBrowser,
  openServersPage,
  ROOT,
  serverRow,
  signInIfAsked,
  startPortal,
  waitForRow,
} from './harness.mjs';
import { startPostgres } from './postgres.mjs';

const NODE = 'worker-1';
const ENTITY = `resource:default/plant-a--${NODE}`;

let pg;
let portal;
let chrome;
let netLock;

function alive(pid) {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return error.code === 'EPERM';
  }
}

/**
 * A rack network no live process holds (~/.cache/rackside/nets/<n>.lock, as
 * packages/rack-testing and bench/ claim them), below the fixed ones of e2e/rack/test (150+)
 * and the other browser tests (190+).
 */
function claimNet() {
  const dir = path.join(cacheDir(), 'nets');
  fs.mkdirSync(dir, { recursive: true });
  for (let net = 100; net < 150; net++) {
    const file = path.join(dir, `${net}.lock`);
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    } catch {
      const owner = Number(fs.readFileSync(file, 'utf8').trim());
      if (owner && alive(owner)) continue;
      fs.writeFileSync(file, String(process.pid));
    }
    return { net, release: () => fs.rmSync(file, { force: true }) };
  }
  throw new Error(`no free rack network in ${dir}`);
}

before(
  async () => {
    pg = await startPostgres();
    netLock = claimNet();
    portal = await startPortal({
      offset: 23,
      net: netLock.net,
      configs: [path.join(ROOT, 'app-config.production.yaml')],
      backendEnv: {
        POSTGRES_HOST: pg.host,
        POSTGRES_PORT: String(pg.port),
        POSTGRES_USER: pg.user,
        POSTGRES_PASSWORD: pg.password,
      },
    });
    chrome = await launchBrowser();
  },
  { timeout: 600_000 },
);

after(async () => {
  await chrome?.close();
  await portal?.stop();
  await pg?.stop();
  netLock?.release();
});

const unschedulable = () =>
  portal
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
    const page = await chrome.context.newPage();
    page.setDefaultTimeout(30_000);
    try {
      let row = await openServersPage(page, portal, NODE);
      // The row links to the catalog entity, read back from PostgreSQL.
      const link = await eventually(
        'catalog link of worker-1',
        async () => {
          await page.goto(`${portal.baseUrl}/servers`);
          await signInIfAsked(
            page,
            page.locator('[data-testid="server-row"]').first(),
          );
          const candidate = serverRow(page, NODE).getByRole('link', {
            name: `catalog entity of ${NODE}`,
          });
          await candidate.waitFor({ timeout: 5_000 });
          return candidate;
        },
        { timeoutMs: 90_000, everyMs: 2000, retryErrors: true },
      );
      assert.equal(
        await link.getAttribute('href'),
        `/catalog/default/resource/plant-a--${NODE}`,
      );
      row = serverRow(page, NODE);

      await row.getByRole('button', { name: `Cordon ${NODE}` }).click();
      let dialog = page.getByRole('dialog');
      await dialog
        .getByTestId('action-reason')
        .fill('e2e on PostgreSQL: TICKET-20');
      await dialog.getByRole('button', { name: 'Cordon', exact: true }).click();
      await dialog.waitFor({ state: 'detached' });
      await waitForRow(row, 'phase Cordoned in the row', r =>
        /Cordoned/.test(r.maintenance),
      );
      await eventually(
        `${NODE} unschedulable in the cluster`,
        async () => unschedulable() === 'true',
      );

      await row
        .getByRole('button', { name: `Return to service ${NODE}` })
        .click();
      dialog = page.getByRole('dialog');
      await dialog.getByTestId('action-reason').fill('e2e on PostgreSQL: done');
      await dialog
        .getByRole('button', { name: 'Return to service', exact: true })
        .click();
      await dialog.waitFor({ state: 'detached' });
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
