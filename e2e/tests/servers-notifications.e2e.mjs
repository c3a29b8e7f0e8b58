// Browser test of Rackside's notifications on the demo portal (docs/architecture.md, "The backend",
// issue 18): the rack's shop/web pods carry backstage.io/kubernetes-id shop-web,
// the catalog's Component shop-web (examples/workloads.yaml) is owned by
// plant-admins, and the guest is a plant admin. The guest drains a worker that
// runs shop/web pods: the pre-flight names the entity and its owner, and when the
// drain starts the owners' notification appears on the portal's /notifications
// page; its link opens the maintenance page. Returning the node to service
// completes the maintenance, and the requester's "complete" notification takes
// the place of the first one (same scope: the maintenance's name), not a second.
// Its own rack (net 199) and port (7016), so it never meets the other tests.
//
//   node --test e2e/tests/servers-notifications.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  allowEmptyDirEviction,
  apiAsSignedInUser,
  eventually,
  openServersPage,
  pickDrainableWorker,
  portalAndBrowser,
  signInIfAsked,
  waitForRow,
  waitForShopWorkloads,
} from './harness.mjs';

const SCREENSHOT =
  process.env.RACKSIDE_E2E_NOTIFICATIONS_SCREENSHOT ??
  '/tmp/rackside-e2e-notifications.png';
const KUBERNETES_ID = 'backstage.io/kubernetes-id';
const REASON = 'e2e: swap the NIC, TICKET-18';

const env = portalAndBrowser({ offset: 9 });

/** The guest's notifications, from the notifications backend's API. */
async function notificationsOf(page) {
  const res = await apiAsSignedInUser(
    page,
    'GET',
    '/api/notifications/notifications?limit=100',
  );
  assert.equal(res.status, 200, res.body);
  return JSON.parse(res.body).notifications;
}

test(
  'a guest drains a worker: the owners of its workloads are notified, the link opens the maintenance, completion replaces it',
  { timeout: 480_000 },
  async t => {
    await waitForShopWorkloads(env.portal);
    const withWeb = env.portal
      .getJson('pods', '-n', 'shop')
      .items.filter(p => p.metadata.labels?.[KUBERNETES_ID] === 'shop-web')
      .map(p => p.spec.nodeName);
    const worker = pickDrainableWorker(env.portal.kubectl, { among: withWeb });
    assert.ok(worker, `a drainable worker among ${withWeb.join(', ')}`);
    const NODE = worker.name;
    const webPods = worker.evictable
      .filter(p => p.metadata.labels?.[KUBERNETES_ID] === 'shop-web')
      .map(p => `${p.metadata.namespace}/${p.metadata.name}`)
      .sort();
    assert.ok(webPods.length > 0, `shop/web pods on ${NODE}`);
    t.diagnostic(`draining ${NODE}, which runs ${webPods.join(', ')}`);

    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      const row = await openServersPage(page, env.portal, NODE);

      // The catalog has read examples/workloads.yaml (and the org) before we ask.
      await eventually(
        'the catalog lists component shop-web',
        async () =>
          (
            await apiAsSignedInUser(
              page,
              'GET',
              '/api/catalog/entities/by-name/component/default/shop-web',
            )
          ).status === 200,
        { timeoutMs: 120_000 },
      );

      // The pre-flight names the entity, its owner and its pods on the node.
      const pre = await apiAsSignedInUser(
        page,
        'GET',
        `/api/servers/clusters/plant-a/servers/${NODE}/preflight?action=drain${
          worker.emptyDir ? '&deleteEmptyDirData=true' : ''
        }`,
      );
      assert.equal(pre.status, 200, pre.body);
      const impact = JSON.parse(pre.body);
      assert.deepEqual(impact.affectedEntities, [
        {
          entityRef: 'component:default/shop-web',
          title: 'Shop web front end',
          owner: 'group:default/plant-admins',
          kubernetesId: 'shop-web',
          pods: webPods,
        },
      ]);

      // The drain, from the row's dialog.
      await row.getByRole('button', { name: `Drain ${NODE}` }).click();
      const dialog = page.getByRole('dialog');
      await dialog.getByTestId('preflight').waitFor();
      if (worker.emptyDir) await allowEmptyDirEviction(dialog);
      // The dialog shows the same list: whom the drain will notify.
      assert.match(
        await dialog.getByTestId('preflight-owners').innerText(),
        new RegExp(
          `Shop web front end \\(component:default/shop-web\\)\\s+owner group:default/plant-admins; pods ${webPods.join(
            ', ',
          )}`,
        ),
      );
      await dialog.getByTestId('action-reason').fill(REASON);
      await dialog.getByLabel('I have reviewed this impact').check();
      await dialog.getByRole('button', { name: 'Drain', exact: true }).click();
      await dialog.waitFor({ state: 'detached' });

      const maintenance = await eventually(
        `the drain NodeMaintenance of ${NODE}`,
        () =>
          env.portal
            .getJson('nodemaintenances')
            .items.find(
              m => m.spec.nodeName === NODE && m.spec.intent === 'drain',
            ),
      );
      const NAME = maintenance.metadata.name;
      const LINK = `/servers/maintenances/plant-a/${NAME}`;
      await waitForRow(
        row,
        'the row reaches Drained',
        r => r.phase === 'Drained',
        {
          timeoutMs: 180_000,
          everyMs: 500,
        },
      );

      // The owners' notification (plant-admins, which the guest is in), on the page.
      await page.goto(`${env.portal.baseUrl}/notifications`);
      const drained = page.getByRole('link', {
        name: new RegExp(
          `^${NODE} \\(plant-a\\) is being drained: Shop web front end loses`,
        ),
      });
      await signInIfAsked(page, drained);
      await eventually(
        'the owners notification on /notifications',
        async () => {
          if ((await drained.count()) > 0) return true;
          await page.reload();
          await drained
            .or(page.getByRole('button', { name: 'Enter' }))
            .first()
            .waitFor({ timeout: 30_000 })
            .catch(() => {});
          await signInIfAsked(page, drained).catch(() => {});
          return (await drained.count()) > 0;
        },
        { timeoutMs: 90_000, everyMs: 2000 },
      );
      assert.equal(await drained.getAttribute('href'), LINK);
      const owners = (await notificationsOf(page)).filter(
        n => n.payload.link === LINK,
      );
      assert.equal(owners.length, 1, 'one notification of this maintenance');
      assert.equal(owners[0].payload.scope, NAME);
      assert.equal(owners[0].payload.severity, 'normal');
      assert.match(
        owners[0].payload.description,
        new RegExp(
          `The drain of ${NODE} in cluster plant-a started at .* UTC, requested by user:default/guest: ${REASON}\\. Evicted .*component:default/shop-web \\(${webPods.join(
            ', ',
          )}\\)`,
        ),
      );

      // The link works: it opens this maintenance's page.
      await drained.click();
      await page.getByTestId('rackside-maintenance-page').waitFor();
      assert.equal(new URL(page.url()).pathname, LINK);
      await page
        .getByTestId('maintenance-phase-chip')
        .getByText('Drained')
        .waitFor();

      // Back in service: the requester's "complete" replaces it (same scope).
      const back = await apiAsSignedInUser(
        page,
        'POST',
        `/api/servers/clusters/plant-a/servers/${NODE}/actions/uncordon`,
        { reason: 'e2e: NIC swapped, TICKET-18' },
      );
      assert.ok(back.status === 200 || back.status === 201, back.body);
      await eventually(
        `${NAME} Complete`,
        () =>
          env.portal
            .getJson('nodemaintenances')
            .items.find(m => m.metadata.name === NAME)?.status?.phase ===
          'Complete',
        { timeoutMs: 120_000 },
      );
      const complete = await eventually(
        'the complete notification in place of the first',
        async () => {
          const mine = (await notificationsOf(page)).filter(
            n => n.payload.link === LINK,
          );
          return mine.length === 1 && /is complete$/.test(mine[0].payload.title)
            ? mine
            : undefined;
        },
        { timeoutMs: 60_000, everyMs: 1000 },
      );
      assert.equal(
        complete[0].payload.title,
        `The drain of ${NODE} (plant-a) is complete`,
      );
      assert.equal(
        complete[0].id,
        owners[0].id,
        'the same notification, updated',
      );
      await page.goto(`${env.portal.baseUrl}/notifications`);
      await page
        .getByRole('link', {
          name: `The drain of ${NODE} (plant-a) is complete`,
        })
        .waitFor({ timeout: 60_000 });
      assert.equal(await drained.count(), 0, 'the drain notice was replaced');
    } finally {
      await page
        .screenshot({ path: SCREENSHOT, fullPage: true })
        .catch(() => {});
      await page.close();
    }
  },
);
