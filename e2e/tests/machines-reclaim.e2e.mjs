// Browser test of Add node and Reset and add against the demo portal on its own
// rack: the guest (a plant admin, so holding machines:reclaim) opens
// /servers/add-node, sees plant-old's worker as AlreadyConfigured, resets and
// adds it with plant-old's talosconfig (the stored-credential warning, the
// typed UUID: a wrong one is not accepted, by the page nor by the API), follows
// the request live to Done, then adds the machine, which joins plant-a as a
// Ready Node with its UUID. The operator does the work: discovery, the UUID
// read through the credential, the reset, the credential's deletion, the join.
// Its own rack (net 196) and port (7013), so it never meets the other files.
//
//   node --test e2e/tests/machines-reclaim.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import path from 'node:path';
import {
  apiAsSignedInUser,
  eventually,
  portalAndBrowser,
  signIn,
} from './harness.mjs';

/** plant-old's worker; its address is on the rack's network (startPortal's). */
const FOREIGN_WORKER_UUID = 'bd49731e-ab42-45d9-9f81-6c7d0e506bdf';
/** plant-old's control plane: a UUID, but not this machine's. */
const OTHER_UUID = '437933e7-5d1e-4d07-8455-ea5d78c647f4';
const NS = 'rackside-system';
const REASON = 'e2e: take over the plant-old worker, TICKET-8';

const env = portalAndBrowser({ offset: 6 });

const getJson = (...args) => env.portal.getJson(...args);

const reclaims = () => getJson('machinereclaims', '-n', NS);

test(
  'a guest resets and adds a machine plant-old holds, and it joins plant-a',
  { timeout: 480_000 },
  async () => {
    const FOREIGN_WORKER = {
      uuid: FOREIGN_WORKER_UUID,
      address: `127.0.${10 + env.portal.net}.42`,
    };
    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      await page.goto(`${env.portal.baseUrl}/servers/add-node`);
      await signIn(page);
      await page.getByTestId('rackside-add-node-page').waitFor();

      // Discovery has probed plant-old's worker: configured by another cluster.
      const address = page.locator(
        `[data-testid="discovery-row"][data-address="${FOREIGN_WORKER.address}"]`,
      );
      await eventually(
        'the foreign worker probed as AlreadyConfigured',
        async () =>
          (await address.getAttribute('data-state')) === 'AlreadyConfigured',
        { timeoutMs: 90_000, retryErrors: true },
      );

      // Reset and add, beside the address.
      await address
        .getByRole('button', {
          name: `Reset and add ${FOREIGN_WORKER.address}`,
        })
        .click();
      const dialog = page.getByRole('dialog');
      await dialog.getByText('Add a machine from another cluster').waitFor();
      assert.equal(
        await dialog.getByTestId('reclaim-address').inputValue(),
        FOREIGN_WORKER.address,
      );
      assert.match(
        await dialog.getByTestId('reclaim-credential-warning').innerText(),
        /admin credential of the other cluster.*Secret in namespace rackside-system/s,
      );
      await dialog
        .getByTestId('reclaim-talosconfig-file')
        .setInputFiles(
          path.join(env.portal.rackDir, 'talos', 'plant-old.talosconfig'),
        );
      await dialog
        .getByText(/plant-old\.talosconfig \(\d+ characters\)/)
        .waitFor();
      await dialog.getByTestId('reclaim-reason').fill(REASON);
      await dialog.getByRole('button', { name: 'Continue' }).click();

      // The operator reads the UUID through the credential and asks for it typed.
      const uuid = dialog.getByTestId('reclaim-machine-uuid');
      await uuid.waitFor({ timeout: 60_000 });
      assert.equal((await uuid.innerText()).trim(), FOREIGN_WORKER.uuid);
      const [request] = reclaims().items;
      assert.ok(request, 'a MachineReclaim exists');
      const name = request.metadata.name;
      assert.equal(request.status.phase, 'AwaitingConfirmation');
      assert.equal(request.spec.requestedBy, 'user:default/guest');
      assert.equal(request.spec.reason, REASON);
      const secretName = request.spec.credentialSecretRef.name;
      assert.equal(secretName, `${name}-talosconfig`);
      const secret = getJson('secret', secretName, '-n', NS);
      assert.equal(
        secret.metadata.ownerReferences[0].uid,
        request.metadata.uid,
        'the credential Secret is owned by the request',
      );
      // The binding the operator checks before it reads the credential (docs/architecture.md, "Adding machines").
      assert.equal(secret.metadata.labels['rackside.dev/credential-of'], name);
      assert.equal(secret.immutable, true);

      // A wrong UUID: the page does not send it, and the API refuses it.
      const typed = dialog.getByTestId('reclaim-typed-uuid');
      const resetButton = dialog.getByRole('button', {
        name: `Reset and add ${FOREIGN_WORKER.address}`,
      });
      await typed.fill(OTHER_UUID);
      await dialog.getByText('This is not the UUID above.').waitFor();
      assert.equal(await resetButton.isDisabled(), true);
      const wrong = await apiAsSignedInUser(
        page,
        'POST',
        `/api/servers/clusters/plant-a/reclaims/${name}/confirm`,
        { uuid: OTHER_UUID },
      );
      assert.equal(wrong.status, 400, wrong.body);
      assert.match(wrong.body, /uuid does not match/);
      const unconfirmed = reclaims().items[0];
      assert.equal(unconfirmed.spec.confirmUUID, undefined);
      assert.equal(unconfirmed.status.phase, 'AwaitingConfirmation');

      // The right one, typed.
      await typed.fill('');
      await typed.pressSequentially(FOREIGN_WORKER.uuid);
      await resetButton.click();

      // Live progress to Done, with the result in words.
      const progress = dialog.getByTestId('reclaim-progress');
      await eventually(
        'the request Done in the dialog',
        async () => (await progress.getAttribute('data-phase')) === 'Done',
        { timeoutMs: 120_000, retryErrors: true },
      );
      const result = await dialog.getByTestId('reclaim-result').innerText();
      assert.match(result, /Done/);
      const done = reclaims().items[0];
      assert.equal(done.status.phase, 'Done');
      assert.equal(done.spec.confirmUUID, FOREIGN_WORKER.uuid);
      assert.ok(done.status.credentialDeletedAt, 'credential deleted');
      assert.equal(
        getJson('secrets', '-n', NS).items.some(
          secret => secret.metadata.name === secretName,
        ),
        false,
        'the single-use credential is gone',
      );
      await dialog.getByRole('button', { name: 'Close' }).click();
      await dialog.waitFor({ state: 'detached' });

      // The machine is back in maintenance mode: a Pending machine to add.
      const machine = page.locator(
        `[data-testid="machine-row"][data-uuid="${FOREIGN_WORKER.uuid}"]`,
      );
      await machine.waitFor({ timeout: 60_000 });
      await machine
        .getByRole('button', { name: `Add ${FOREIGN_WORKER.uuid}` })
        .click();
      const join = page.getByRole('dialog');
      await join.getByTestId('join-reason').fill(REASON);
      await join.getByRole('button', { name: 'Add', exact: true }).click();
      await join.waitFor({ state: 'detached' });

      await eventually(
        'the machine Joined on the page',
        async () => (await machine.getAttribute('data-phase')) === 'Joined',
        { timeoutMs: 120_000, retryErrors: true },
      );
      const node = getJson('nodes').items.find(
        n => n.status?.nodeInfo?.systemUUID === FOREIGN_WORKER.uuid,
      );
      assert.ok(node, 'a Node carries the machine UUID');
      assert.equal(
        node.status.conditions.find(c => c.type === 'Ready')?.status,
        'True',
      );
      const talosMachine = getJson(
        'talosmachine',
        FOREIGN_WORKER.uuid,
        '-n',
        NS,
      );
      assert.equal(talosMachine.spec.join.by, 'user:default/guest');
      assert.equal(talosMachine.status.nodeName, node.metadata.name);
      // The create and the confirm went through the operator's admission webhook, as
      // the backend's identity (which holds the reclaim verb).
      const operatorLog = fs.readFileSync(
        path.join(env.portal.logs, 'operator.log'),
        'utf8',
      );
      assert.match(
        operatorLog,
        /admission CREATE rackside-system\/\S+ by system:serviceaccount:rackside-system:rackside-backstage: allowed/,
      );
      assert.match(
        operatorLog,
        /admission UPDATE rackside-system\/\S+ by system:serviceaccount:rackside-system:rackside-backstage: allowed/,
      );
    } catch (error) {
      await page
        .screenshot({ path: '/tmp/rackside-e2e-reclaim.png', fullPage: true })
        .catch(() => {});
      throw error;
    } finally {
      await page.close();
    }
  },
);
