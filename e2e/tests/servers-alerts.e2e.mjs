// Browser test of Alertmanager in the portal (docs/alerts.md, "In the portal"): an alert
// posted for worker-1 to the rack's real Alertmanager (as Prometheus would) shows on its
// row of the Servers page as firing; the guest cordons worker-1; the maintenance page
// shows the silence the maintenance holds and the node's alert, silenced by Rackside.
//
// The silences are the operator's own (the harness gives it the rack's Alertmanager):
// one per node matcher template, named in the maintenance's status.alerting.
// Its own port (7031) and a free rack network (claimRackNet).
//
//   node --test e2e/tests/servers-alerts.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  actWithReason,
  apiAsSignedInUser,
  eventually,
  openServersPage,
  portalAndBrowser,
  reloadUntil,
  signInIfAsked,
} from './harness.mjs';

const NODE = 'worker-1';
const REASON = 'e2e: replace the fan of worker-1, TICKET-39';
const SCREENSHOT =
  process.env.RACKSIDE_E2E_ALERTS_SCREENSHOT ?? '/tmp/rackside-e2e-alerts.png';

const env = portalAndBrowser({ offset: 31 }, { claimNet: true });

function alertmanagerUrl() {
  const url = env.portal.rackInfo().alertmanager?.url;
  assert.ok(url, 'the rack runs an Alertmanager (rack.json alertmanager.url)');
  return url;
}

async function alertmanager(path, body) {
  const res = await fetch(`${alertmanagerUrl()}/api/v2${path}`, {
    method: body === undefined ? 'GET' : 'POST',
    headers: { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  assert.ok(res.ok, `Alertmanager ${path}: ${res.status} ${text}`);
  return text ? JSON.parse(text) : undefined;
}

test(
  "a Servers row shows the node's firing alert; the maintenance page shows its silence",
  { timeout: 600_000 },
  async () => {
    // As Prometheus would: the backend reads Alertmanager when the page reads the cluster.
    await alertmanager('/alerts', [
      {
        labels: {
          alertname: 'FanFailure',
          node: NODE,
          instance: `${NODE}:9100`,
          severity: 'critical',
        },
        annotations: { summary: 'fan 2 of worker-1 stopped' },
      },
    ]);

    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      const row = await openServersPage(page, env.portal, NODE);
      // The first read of the cluster's alerts waits for Alertmanager; later ones come
      // with the change signal, or at the latest with a reload 30 s later.
      const alerts = row.getByTestId('server-alerts');
      await reloadUntil(page, row, 'the row shows the firing alert', async () =>
        /1 firing · critical/.test(
          (await alerts.count()) ? await alerts.innerText() : '',
        ),
      );
      const other = page.locator(
        '[data-testid="server-row"][data-node="worker-2"] [data-testid="server-alerts"]',
      );
      assert.equal(await other.count(), 0, 'worker-2 has no alert chip');

      await actWithReason(page, row, {
        action: 'Cordon',
        node: NODE,
        reason: REASON,
      });
      const maintenance = await eventually(
        'the cordon reaches Cordoned',
        () =>
          env.portal
            .getJson('nodemaintenances')
            .items.find(
              m =>
                m.spec.nodeName === NODE &&
                m.spec.intent === 'cordon' &&
                m.status?.phase === 'Cordoned',
            ),
        { timeoutMs: 120_000 },
      );

      // The operator's silences, and the backend answering them.
      const seen = [];
      const silenceIds = await eventually(
        "the operator holds the maintenance's silences and the backend answers them",
        async () => {
          const kept = env.portal.getJson(
            'nodemaintenance',
            maintenance.metadata.name,
          ).status?.alerting;
          const answer = await apiAsSignedInUser(
            page,
            'GET',
            `/api/servers/clusters/plant-a/maintenances/${maintenance.metadata.name}`,
          );
          const answered = JSON.parse(answer.body).alerting;
          seen.push(
            `kube ${JSON.stringify(kept)} backend ${JSON.stringify(answered)}`,
          );
          return (
            kept?.silenceIds?.length === 2 &&
            JSON.stringify(answered?.silenceIds) ===
              JSON.stringify(kept.silenceIds) &&
            kept.silenceIds
          );
        },
        { timeoutMs: 60_000 },
      ).catch(error => {
        throw new Error(`${error.message}\n${seen.slice(-5).join('\n')}`);
      });
      // In Alertmanager: Rackside's, for the guest, naming the maintenance.
      const silences = await alertmanager('/silences');
      for (const id of silenceIds) {
        const silence = silences.find(x => x.id === id);
        assert.ok(silence, `silence ${id} is in Alertmanager`);
        // A new silence starts a second ahead (docs/alerts.md): pending, then active.
        assert.ok(
          ['pending', 'active'].includes(silence.status.state),
          `silence ${id} is ${silence.status.state}`,
        );
        assert.equal(silence.createdBy, 'Rackside for user:default/guest');
        assert.match(silence.comment, new RegExp(maintenance.metadata.uid));
      }
      const silenceID = silenceIds[0];

      await page.goto(
        `${env.portal.baseUrl}/servers/maintenances/plant-a/${maintenance.metadata.name}`,
      );
      const silence = page.getByTestId('maintenance-silence');
      await signInIfAsked(page, silence);
      await silence.waitFor();
      assert.match(await silence.innerText(), new RegExp(silenceID));
      assert.match(await silence.innerText(), /renewed at/);
      // The node's alert, silenced by Rackside's silence (once the backend read it again).
      const alert = page.locator(
        '[data-testid="maintenance-alert"][data-alertname="FanFailure"]',
      );
      await reloadUntil(
        page,
        silence,
        'the maintenance page shows the alert silenced by Rackside',
        async () =>
          (await alert.count()) > 0 &&
          /silenced by Rackside/.test(await alert.innerText()),
      );
      assert.match(await alert.innerText(), /fan 2 of worker-1 stopped/);

      // The row counts it as silenced now, no longer firing.
      await page.goto(`${env.portal.baseUrl}/servers`);
      const again = page.locator(
        `[data-testid="server-row"][data-node="${NODE}"]`,
      );
      await signInIfAsked(page, again);
      await again.waitFor();
      await reloadUntil(
        page,
        again,
        'the row shows the alert silenced',
        async () => {
          const chip = again.getByTestId('server-alerts');
          return (
            (await chip.count()) > 0 &&
            (await chip.innerText()).trim() === '1 silenced'
          );
        },
      );
    } finally {
      await page
        .screenshot({ path: SCREENSHOT, fullPage: true })
        .catch(() => {});
      await page.close();
    }
  },
);
