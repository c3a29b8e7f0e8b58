// Browser test of approvals (docs/approvals.md, issue 48) on the demo portal with one
// approval rule: a reboot needs the approval of group platform-oncall. Two users of
// examples/org.yaml sign in through the guest provider, one after the other: the guest
// (plant-admins) requests a reboot of a worker through the usual dialog; the notice says
// who must approve, the row carries the "Awaiting approval" chip, the Servers page's
// filter keeps that row alone, and the node is untouched (schedulable, nothing sent). The
// requester's own maintenance page says it awaits platform-oncall and offers no decision,
// and their Approvals for me page is empty. Then the on-call user (plant-admins and
// platform-oncall) signs in: the "Approval asked" notification reached them on
// /notifications, the Approvals for me page (linked from the Servers page header) lists
// the request, and its maintenance page shows the impact acknowledged beside the impact
// now; they approve with the keyboard alone (Space, typing, Tab, Enter), and the
// maintenance goes on: drained, rebooted, Complete, the approval on the object naming
// them. axe-core runs on the Servers page with the chip, on Approvals for me and on the
// approval panel, and fails on a serious or critical violation, or a moderate or minor
// one that is not the demo shell's (servers-a11y.e2e.mjs, docs/accessibility.md).
//
// Two users, one backend: the guest provider reads auth.providers.guest.userEntityRef at
// each sign-in from a config file of this test that the backend watches (as
// servers-mcp.e2e.mjs does); the test rewrites it between the two users, and the browser's
// cookies and storage are cleared so the app signs in again.
// Its own port (7040, offset 33) and a rack network claimed with the rack tests' lock
// files (claimRackNet).
//
//   node --test e2e/tests/servers-approvals.e2e.mjs
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import {
  allowEmptyDirEviction,
  apiAsSignedInUser,
  eventually,
  formatViolations,
  pickDrainableWorker,
  portalAndBrowser,
  readRow,
  reloadUntil,
  runAxe,
  serverRow,
  signIn,
  signInIfAsked,
  waitForRedfishReboot,
  waitForRow,
  waitForShopWorkloads,
} from './harness.mjs';

const SCREENSHOT =
  process.env.RACKSIDE_E2E_APPROVALS_SCREENSHOT ??
  '/tmp/rackside-e2e-approvals.png';
const CLUSTER = 'plant-a';
const REQUESTER = 'user:default/guest';
const APPROVER = 'user:default/oncall';
const RULE = 'reboots-need-oncall';
const REASON = 'e2e: BIOS update, TICKET-48';
const APPROVAL_REASON = 'e2e: checked with the shop team, TICKET-48';

/** As servers-a11y.e2e.mjs: the demo shell's route announcer sits outside every landmark. */
const MODERATE_NOT_OURS = { region: '.bui-VisuallyHidden' };

const workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-approvals-'));
const guestConfig = path.join(workDir, 'app-config.guest.yaml');
const approvalsConfig = path.join(workDir, 'app-config.approvals.yaml');

const writeGuest = userRef =>
  fs.writeFileSync(
    guestConfig,
    `auth:\n  providers:\n    guest:\n      userEntityRef: ${userRef}\n`,
  );

const env = portalAndBrowser(
  async () => {
    writeGuest(REQUESTER);
    fs.writeFileSync(
      approvalsConfig,
      [
        'servers:',
        '  approvals:',
        '    rules:',
        `      - name: ${RULE}`,
        '        select:',
        '          actions: [reboot]',
        '        approvers: [group:default/platform-oncall]',
        '        expiresAfterMinutes: 60',
        '',
      ].join('\n'),
    );
    return { offset: 33, configs: [guestConfig, approvalsConfig] };
  },
  {
    claimNet: true,
    cleanup: () => fs.rmSync(workDir, { recursive: true, force: true }),
  },
);

const getJson = (...args) => env.portal.getJson(...args);

/** The `sub` of a Backstage token (a JWT). */
const subjectOf = token =>
  JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub;

/**
 * Makes `userRef` the one the guest provider signs in, once the provider does and the
 * catalog knows them (their groups decide what they may do and which approvals are
 * theirs).
 */
async function switchGuestTo(userRef) {
  writeGuest(userRef);
  const [, namespace, name] = userRef.match(/^user:(\w+)\/(.+)$/);
  await eventually(
    `the guest provider signs in ${userRef}, known to the catalog`,
    async () => {
      const res = await fetch(`${env.portal.baseUrl}/api/auth/guest/refresh`, {
        headers: { 'x-requested-with': 'XMLHttpRequest' },
      });
      if (!res.ok) return false;
      const token = (await res.json()).backstageIdentity.token;
      if (subjectOf(token) !== userRef) return false;
      const entity = await fetch(
        `${env.portal.baseUrl}/api/catalog/entities/by-name/user/${namespace}/${name}`,
        { headers: { authorization: `Bearer ${token}` } },
      );
      return entity.ok;
    },
    { timeoutMs: 120_000, everyMs: 500 },
  );
}

/** Who the page's app is signed in as (its guest session's refresh). */
async function signedInAs(page) {
  return page.evaluate(async () => {
    const session = await fetch('/api/auth/guest/refresh', {
      headers: { 'x-requested-with': 'XMLHttpRequest' },
    }).then(r => r.json());
    return session.backstageIdentity.identity.userEntityRef;
  });
}

/** axe on the page now: serious and critical fail, moderate and minor too unless the shell's. */
async function axeFindings(t, page, where) {
  const { blocking, other } = await runAxe(page);
  const ours = other.filter(
    v =>
      MODERATE_NOT_OURS[v.id] === undefined ||
      !v.targets.every(target => target === MODERATE_NOT_OURS[v.id]),
  );
  const found = [...blocking, ...ours];
  if (found.length > 0) {
    t.diagnostic(`${where}:\n${formatViolations(found)}`);
    return [`${where}:\n${formatViolations(found)}`];
  }
  return [];
}

test(
  'a reboot a rule holds waits for platform-oncall: chip and filter, the approver notified, Approvals for me, approved from the panel by keyboard, then it runs',
  { timeout: 600_000 },
  async t => {
    await waitForRedfishReboot(env.portal);
    await waitForShopWorkloads(env.portal);
    const withBmc = getJson('serverbmcs').items.map(b => b.metadata.name);
    const worker = pickDrainableWorker(env.portal.kubectl, {
      among: withBmc,
      needPods: false,
    });
    assert.ok(worker, `a drainable worker with a ServerBMC among ${withBmc}`);
    const NODE = worker.name;
    const machine = env.portal.machineOf(NODE);
    const countsBefore = await env.portal.machineCounts(machine.uuid);
    const axe = [];
    t.diagnostic(`requesting a reboot of ${NODE}`);

    const page = await env.newPage();
    page.setDefaultTimeout(30_000);
    try {
      // The requester: a reboot through the usual dialog.
      await page.goto(`${env.portal.baseUrl}/servers`);
      await signIn(page);
      const row = serverRow(page, NODE);
      await row.waitFor({ timeout: 60_000 });
      assert.equal(await signedInAs(page), REQUESTER);
      const rebootButton = row.getByRole('button', { name: `Reboot ${NODE}` });
      await reloadUntil(page, row, `the row of ${NODE} offers Reboot`, () =>
        rebootButton.isVisible(),
      );
      await rebootButton.click();
      const dialog = page.getByRole('dialog');
      await dialog.getByTestId('preflight').waitFor();
      if (worker.emptyDir) await allowEmptyDirEviction(dialog);
      await dialog.getByTestId('action-reason').fill(REASON);
      await dialog.getByLabel('I have reviewed this impact').check();
      await dialog.getByLabel(`Type ${NODE} to confirm`).fill(NODE);
      await dialog.getByRole('button', { name: 'Reboot', exact: true }).click();
      await dialog.waitFor({ state: 'detached' });

      // The notice says who must approve it.
      assert.match(
        await page.getByTestId('action-success').innerText(),
        new RegExp(
          `Nothing happens until it is approved by platform-oncall \\(rule ${RULE}, until `,
        ),
      );

      // Held: the row's chip, the phase, and the node untouched.
      await waitForRow(
        row,
        `${NODE} awaiting approval`,
        ({ phase }) => phase === 'AwaitingApproval',
        { timeoutMs: 60_000, everyMs: 250 },
      );
      await row.getByTestId('awaiting-approval-chip').waitFor();
      assert.equal(
        (await row.getByTestId('awaiting-approval-chip').innerText()).trim(),
        'Awaiting approval',
      );
      assert.match((await readRow(row)).schedulable, /^Schedulable/);
      const [held] = getJson('nodemaintenances').items.filter(
        m => m.spec.nodeName === NODE && m.spec.intent === 'reboot',
      );
      assert.ok(held, `a reboot maintenance of ${NODE}`);
      const NAME = held.metadata.name;
      const LINK = `/servers/maintenances/${CLUSTER}/${NAME}`;
      assert.equal(held.spec.requestedBy, REQUESTER);
      assert.equal(held.spec.approval?.required, true);
      assert.equal(held.spec.approval.rule, RULE);
      assert.deepEqual(held.spec.approval.approvers, [
        'group:default/platform-oncall',
      ]);
      assert.equal(held.spec.approval.approvedBy, undefined);
      assert.equal(held.status?.phase, 'AwaitingApproval');
      assert.notEqual(getJson('node', NODE).spec.unschedulable, true);

      // The filter keeps the held row alone, and gives the others back.
      const table = page.getByTestId(`server-table-${CLUSTER}`);
      const toggle = page.getByRole('button', {
        name: `Awaiting approval (filter servers of ${CLUSTER})`,
      });
      await toggle.click();
      assert.equal(await toggle.getAttribute('aria-pressed'), 'true');
      await eventually(
        'the filter keeps the held row alone',
        async () =>
          (await table.getByTestId('server-row').count()) === 1 &&
          (await table.getByTestId('server-row').getAttribute('data-node')) ===
            NODE,
        { timeoutMs: 30_000, everyMs: 250 },
      );
      axe.push(
        ...(await axeFindings(
          t,
          page,
          'Servers page, filtered, with the chip',
        )),
      );
      await toggle.click();
      await eventually(
        'every row again',
        async () => (await table.getByTestId('server-row').count()) > 1,
        { timeoutMs: 30_000, everyMs: 250 },
      );

      // The requester's own page: who must approve, no decision for them.
      await page.goto(`${env.portal.baseUrl}${LINK}`);
      const status = page.getByTestId('approval-status');
      await signInIfAsked(page, status);
      assert.match(
        await status.innerText(),
        new RegExp(
          `^Awaiting approval from platform-oncall \\(rule ${RULE}\\)`,
        ),
      );
      await page.getByTestId('approval-not-yours').waitFor();
      assert.equal(
        await page.getByRole('button', { name: 'Approve' }).count(),
        0,
        'the requester is offered no Approve',
      );
      const own = await apiAsSignedInUser(
        page,
        'GET',
        '/api/servers/approvals?for=me',
      );
      assert.equal(own.status, 200, own.body);
      assert.deepEqual(
        JSON.parse(own.body).items,
        [],
        'nothing for the requester',
      );

      // The approver signs in.
      await switchGuestTo(APPROVER);
      await env.chrome.context.clearCookies();
      await page.evaluate(() => {
        window.localStorage.clear();
        window.sessionStorage.clear();
      });

      // The notification reached them, and its link is the request's page.
      await page.goto(`${env.portal.baseUrl}/notifications`);
      const asked = page.getByRole('link', {
        name: new RegExp(
          `^Approval asked: the reboot of ${NODE} \\(${CLUSTER}\\)`,
        ),
      });
      await signInIfAsked(page, asked);
      assert.equal(await signedInAs(page), APPROVER);
      await eventually(
        'the approval asked notification on /notifications',
        async () => {
          if ((await asked.count()) > 0) return true;
          await page.reload();
          await asked
            .or(page.getByRole('button', { name: 'Enter' }))
            .first()
            .waitFor({ timeout: 30_000 })
            .catch(() => {});
          await signInIfAsked(page, asked).catch(() => {});
          return (await asked.count()) > 0;
        },
        { timeoutMs: 90_000, everyMs: 2000 },
      );
      assert.equal(await asked.getAttribute('href'), LINK);
      const notes = JSON.parse(
        (
          await apiAsSignedInUser(
            page,
            'GET',
            '/api/notifications/notifications?limit=100',
          )
        ).body,
      ).notifications.filter(n => n.payload.link === LINK);
      assert.equal(notes.length, 1, 'one notification of this request');
      assert.match(
        notes[0].payload.description,
        new RegExp(`${REQUESTER} asks for the reboot of ${NODE}`),
      );

      // Approvals for me, from the Servers page header.
      await page.goto(`${env.portal.baseUrl}/servers`);
      const forMe = page.getByRole('link', { name: 'Approvals for me' });
      await signInIfAsked(page, forMe);
      await forMe.click();
      const item = page.locator(
        `[data-testid="approval-item"][data-name="${NAME}"]`,
      );
      await item.waitFor();
      const itemText = await item.innerText();
      assert.match(itemText, new RegExp(`Reboot of ${NODE}`));
      assert.match(itemText, new RegExp(REASON));
      assert.match(itemText, new RegExp(RULE));
      axe.push(...(await axeFindings(t, page, 'Approvals for me')));
      await item.getByRole('link', { name: `Open ${NAME} to decide` }).click();

      // The panel: the impact then and now, and the decision, by keyboard alone.
      const panel = page.getByTestId('approval-panel');
      await panel.getByTestId('approval-impact').waitFor();
      assert.equal(new URL(page.url()).pathname, LINK);
      const rows = await panel
        .getByTestId('approval-impact-row')
        .evaluateAll(els => els.map(e => e.innerText));
      assert.ok(
        rows.some(r => /Ceremony/.test(r) && /typed name/.test(r)),
        `the rung, then and now: ${rows.join(' | ')}`,
      );
      axe.push(...(await axeFindings(t, page, 'the approval panel')));
      await page
        .screenshot({
          path: SCREENSHOT.replace(/(\.png)?$/, '-panel.png'),
          fullPage: true,
        })
        .catch(() => {});

      const ack = panel.getByLabel('I have reviewed this impact');
      const approve = panel.getByRole('button', { name: 'Approve' });
      assert.equal(
        await approve.isDisabled(),
        true,
        'nothing acknowledged yet',
      );
      await ack.focus();
      await page.keyboard.press('Space');
      assert.equal(await ack.isChecked(), true, 'Space ticks it');
      await page.keyboard.press('Tab');
      assert.equal(
        await page.evaluate(() =>
          document.activeElement?.getAttribute('data-testid'),
        ),
        'approval-reason',
        'Tab goes to the reason',
      );
      await page.keyboard.type(APPROVAL_REASON);
      await page.keyboard.press('Tab');
      assert.equal(
        await page.evaluate(() => document.activeElement?.textContent),
        'Approve',
        'Tab goes on to Approve',
      );
      await page.keyboard.press('Enter');

      // Approved: the maintenance goes on, and runs to its end.
      await eventually(
        `${NAME} approved by ${APPROVER}`,
        () =>
          getJson('nodemaintenance', NAME).spec.approval?.approvedBy ===
          APPROVER,
        { timeoutMs: 30_000 },
      );
      const approved = getJson('nodemaintenance', NAME);
      assert.equal(approved.spec.approval.approvedRung, 'typed-name');
      await eventually(
        `${NAME} Complete`,
        () => getJson('nodemaintenance', NAME).status?.phase === 'Complete',
        { timeoutMs: 300_000, everyMs: 1000 },
      );
      const done = getJson('nodemaintenance', NAME);
      const phases = (done.status.history ?? []).map(h => h.phase);
      assert.ok(
        phases.indexOf('AwaitingApproval') < phases.indexOf('Drained') &&
          phases.includes('Rebooting') &&
          phases.at(-1) === 'Complete',
        `AwaitingApproval → … → Drained → Rebooting → … → Complete (${phases.join(
          ' → ',
        )})`,
      );
      assert.ok(done.status.power?.reboot?.sentAt, 'the reboot was sent');
      const countsAfter = await env.portal.machineCounts(machine.uuid);
      assert.equal(
        countsAfter.powerOff - countsBefore.powerOff,
        1,
        'one power cycle',
      );
      await page
        .getByTestId('maintenance-phase-chip')
        .getByText('Complete')
        .waitFor({ timeout: 60_000 });
      assert.deepEqual(axe, [], `axe-core violations:\n${axe.join('\n')}`);
    } finally {
      await page
        .screenshot({ path: SCREENSHOT, fullPage: true })
        .catch(() => {});
      await page.close();
    }
  },
);
