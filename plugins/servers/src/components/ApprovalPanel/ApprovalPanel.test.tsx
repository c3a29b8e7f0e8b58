import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import type {
  ApprovalView,
  MaintenanceResponse,
} from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import {
  fakeServersApi,
  responseError,
  serverList,
} from '../../testing/fixtures';
import { hazardPreflight, rebootPreflight } from '../../testing/power';
import { plan, planPreflight, renderWithApi } from '../../__testUtils__/plans';
import { ServersLinksProvider } from '../ui/links';
import { MaintenancePage } from '../MaintenancePage';
import { PlanPage } from '../PlanPage';
import { ApprovalRungGrewError, PreflightChangedError } from '../../api/errors';
import { phaseColor } from '../MaintenancePage/MaintenanceSection';
import { planPhaseColor } from '../ui/planText';
import { impactRows, rungAbove, refName, approversText } from './approvalText';

/** A reboot of worker-1 held until someone approves it. */
function awaitingReboot(
  overrides: Partial<MaintenanceResponse> = {},
): MaintenanceResponse {
  return {
    name: 'worker-1-reboot-abc',
    nodeName: 'worker-1',
    intent: 'reboot',
    reason: 'firmware update TICKET-7',
    requestedBy: 'user:default/guest',
    createdAt: '2026-12-07T10:00:00Z',
    // The phase the approvals contract adds; cast while the union may not have it.
    phase: 'AwaitingApproval' as MaintenanceResponse['phase'],
    terminal: false,
    conditions: [],
    history: [],
    ...overrides,
  };
}

/** Its approval as the backend answers it to an approver. */
function awaitingView(overrides: Partial<ApprovalView> = {}): ApprovalView {
  return {
    cluster: 'rack',
    kind: 'maintenance',
    name: 'worker-1-reboot-abc',
    state: 'awaiting',
    rule: 'reboots-need-two',
    approvers: ['group:default/platform-oncall', 'user:default/alice'],
    expiresAt: '2026-12-07T14:00:00Z',
    requestedBy: 'user:default/guest',
    requestedRung: 'typed-name',
    acknowledged: {
      takenAt: '2026-12-07T09:59:00Z',
      ceremony: 'typed-name',
      pods: [{ namespace: 'shop', name: 'web-1' }],
      blockingPDBs: [],
      quorum: { members: 3, quorum: 2, ready: 3, margin: 1 },
    },
    now: rebootPreflight({ token: 'tok-now' }),
    rungNow: 'typed-name',
    mayApprove: true,
    ...overrides,
  };
}

function renderMaintenance(api: ReturnType<typeof fakeServersApi>) {
  return renderInTestApp(
    <ServersLinksProvider links={{ servers: () => '/servers' }}>
      <MaintenancePage cluster="rack" name="worker-1-reboot-abc" />
    </ServersLinksProvider>,
    { apis: [[serversApiRef, api]] },
  );
}

function apiWith(view: ApprovalView, m = awaitingReboot()) {
  const api = fakeServersApi(serverList([]));
  api.getMaintenance.mockResolvedValue(m);
  api.getApproval.mockResolvedValue(view);
  return api;
}

describe('the approval panel on the maintenance page', () => {
  it('says who must approve, and shows the impact acknowledged beside the impact now', async () => {
    const api = apiWith(
      awaitingView({
        now: rebootPreflight({
          token: 'tok-now',
          budgets: [
            {
              namespace: 'shop',
              name: 'payments',
              disruptionsAllowed: 0,
              pods: ['shop/payments-1'],
              blocksNow: true,
            },
          ],
        }),
      }),
    );
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    expect(api.getApproval).toHaveBeenCalledWith(
      'rack',
      'maintenance',
      'worker-1-reboot-abc',
    );
    expect(
      within(panel).getByRole('heading', { name: 'Approval' }),
    ).toBeInTheDocument();
    const status = await within(panel).findByTestId('approval-status');
    expect(status).toHaveTextContent(
      'Awaiting approval from platform-oncall or alice (rule reboots-need-two)',
    );
    const table = within(panel).getByRole('table', {
      name: 'Impact acknowledged and now',
    });
    const rows = within(table).getAllByTestId('approval-impact-row');
    const budgets = rows.find(r => /Budgets in the way/.test(r.textContent!));
    expect(budgets).toHaveTextContent('none');
    expect(budgets).toHaveTextContent('shop/payments (changed)');
    expect(budgets).toHaveAttribute('data-changed', 'true');
    const ceremony = rows.find(r => /Ceremony/.test(r.textContent!));
    expect(ceremony).not.toHaveAttribute('data-changed');
    // The fresh pre-flight in full, folded under a button.
    expect(
      within(panel).getByRole('button', {
        name: 'The pre-flight now, in full',
      }),
    ).toBeInTheDocument();
  });

  it('compares the alerts firing and the node-local data then and now, marking what changed', async () => {
    const api = apiWith(
      awaitingView({
        acknowledged: {
          takenAt: '2026-12-07T09:59:00Z',
          ceremony: 'typed-name',
          pods: [{ namespace: 'shop', name: 'db-0' }],
          blockingPDBs: [],
          quorum: { members: 3, quorum: 2, ready: 3, margin: 1 },
          alerts: [{ alertname: 'NodeNoisy' }],
          nodeLocalData: [{ namespace: 'shop', name: 'db-0' }],
        },
        now: rebootPreflight({
          token: 'tok-now',
          alerts: [
            { alertname: 'NodeNoisy' },
            { alertname: 'DiskFailing', severity: 'critical' },
          ],
          nodeLocal: [
            {
              namespace: 'shop',
              name: 'db-0',
              terminating: false,
              nodeLocalData: ['volume data: local PersistentVolume pv-db'],
            },
          ],
        }),
      }),
    );
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    const table = await within(panel).findByRole('table', {
      name: 'Impact acknowledged and now',
    });
    const rows = within(table).getAllByTestId('approval-impact-row');
    const alerts = rows.find(r => /Alerts firing/.test(r.textContent!));
    expect(alerts).toHaveTextContent('NodeNoisy');
    expect(alerts).toHaveTextContent(
      'DiskFailing (critical), NodeNoisy (changed)',
    );
    expect(alerts).toHaveAttribute('data-changed', 'true');
    const nodeLocal = rows.find(r => /Node-local data/.test(r.textContent!));
    expect(nodeLocal).toHaveTextContent('shop/db-0');
    expect(nodeLocal).not.toHaveTextContent('(changed)');
    expect(nodeLocal).not.toHaveAttribute('data-changed');
  });

  it('approves with the fresh token once the impact is acknowledged and a reason given, every control in the tab order', async () => {
    const api = apiWith(awaitingView());
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    const approve = await within(panel).findByRole('button', {
      name: 'Approve',
    });
    const reject = within(panel).getByRole('button', { name: 'Reject' });
    expect(approve).toBeDisabled();
    expect(reject).toBeDisabled();

    // Every control is a native one in the tab order (the browser test tabs through them).
    const ack = within(panel).getByRole('checkbox', {
      name: 'I have reviewed this impact',
    });
    expect(ack).not.toHaveAttribute('tabindex', '-1');
    fireEvent.click(ack);
    expect(approve).toBeDisabled();
    fireEvent.change(within(panel).getByTestId('approval-reason'), {
      target: { value: 'checked the drain with the shop team' },
    });
    expect(approve).toBeEnabled();
    // Enabled buttons are in the tab order (a disabled MUI button is not).
    for (const control of [approve, reject]) {
      expect(control).not.toHaveAttribute('tabindex', '-1');
    }
    fireEvent.click(approve);

    await waitFor(() =>
      expect(api.decideApproval).toHaveBeenCalledWith(
        'rack',
        'maintenance',
        'worker-1-reboot-abc',
        {
          decision: 'approve',
          reason: 'checked the drain with the shop team',
          preflightToken: 'tok-now',
        },
      ),
    );
    // Read again after the decision.
    await waitFor(() => expect(api.getApproval).toHaveBeenCalledTimes(2));
  });

  it('asks the typed node name when the impact now is at the hazard rung', async () => {
    const api = apiWith(
      awaitingView({
        requestedRung: 'hazard',
        rungNow: 'hazard',
        now: hazardPreflight({ node: 'worker-1', token: 'tok-hazard' }),
      }),
    );
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    const decision = await within(panel).findByTestId('approval-decision');
    expect(decision).toHaveAttribute('data-ceremony', 'hazard');
    const approve = within(panel).getByRole('button', { name: 'Approve' });
    fireEvent.click(
      within(panel).getByRole('checkbox', {
        name: 'I have reviewed this impact',
      }),
    );
    fireEvent.change(within(panel).getByTestId('approval-reason'), {
      target: { value: 'storage team agrees' },
    });
    expect(approve).toBeDisabled();
    const typed = within(panel).getByLabelText(/Type worker-1 to confirm/);
    fireEvent.change(typed, { target: { value: 'worker-2' } });
    expect(approve).toBeDisabled();
    fireEvent.change(typed, { target: { value: 'worker-1' } });
    expect(approve).toBeEnabled();
    fireEvent.click(approve);
    await waitFor(() =>
      expect(api.decideApproval).toHaveBeenCalledWith(
        'rack',
        'maintenance',
        'worker-1-reboot-abc',
        {
          decision: 'approve',
          reason: 'storage team agrees',
          preflightToken: 'tok-hazard',
          typedName: 'worker-1',
        },
      ),
    );
  });

  it('rejects only with a reason, without a token', async () => {
    const api = apiWith(awaitingView());
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    const reject = await within(panel).findByRole('button', { name: 'Reject' });
    expect(reject).toBeDisabled();
    fireEvent.change(within(panel).getByTestId('approval-reason'), {
      target: { value: 'not during the sale' },
    });
    fireEvent.click(reject);
    await waitFor(() =>
      expect(api.decideApproval).toHaveBeenCalledWith(
        'rack',
        'maintenance',
        'worker-1-reboot-abc',
        { decision: 'reject', reason: 'not during the sale' },
      ),
    );
  });

  it("shows the backend's 403 in its words", async () => {
    const api = apiWith(awaitingView());
    api.decideApproval.mockRejectedValue(
      await responseError(403, 'Forbidden', {
        name: 'NotAllowedError',
        message: 'you requested this maintenance: someone else must approve it',
      }),
    );
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    fireEvent.click(
      await within(panel).findByRole('checkbox', {
        name: 'I have reviewed this impact',
      }),
    );
    fireEvent.change(within(panel).getByTestId('approval-reason'), {
      target: { value: 'ok' },
    });
    fireEvent.click(within(panel).getByRole('button', { name: 'Approve' }));
    const alert = await within(panel).findByTestId('approval-error');
    expect(alert).toHaveAttribute('role', 'alert');
    expect(alert).toHaveTextContent('Not allowed');
    expect(alert).toHaveTextContent(
      'you requested this maintenance: someone else must approve it',
    );
  });

  it('shows a 409 that the rung grew with both rungs: ask again', async () => {
    const api = apiWith(awaitingView());
    api.decideApproval.mockRejectedValue(
      new ApprovalRungGrewError(
        'grew',
        { requestedRung: 'typed-name', rungNow: 'hazard' },
        await responseError(409, 'Conflict', { message: 'grew' }),
      ),
    );
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    fireEvent.click(
      await within(panel).findByRole('checkbox', {
        name: 'I have reviewed this impact',
      }),
    );
    fireEvent.change(within(panel).getByTestId('approval-reason'), {
      target: { value: 'ok' },
    });
    fireEvent.click(within(panel).getByRole('button', { name: 'Approve' }));
    const alert = await within(panel).findByTestId('approval-rung-grew');
    expect(alert).toHaveTextContent('Ask again');
    expect(alert).toHaveTextContent(
      'the requester acknowledged the typed name rung, it is at the hazard rung now',
    );
    expect(alert).toHaveTextContent('Nothing was changed.');
  });

  it('reads the approval again when the backend says the impact changed, and asks for the acknowledgement again', async () => {
    const api = apiWith(awaitingView());
    api.getApproval
      .mockResolvedValueOnce(awaitingView())
      .mockResolvedValue(
        awaitingView({ now: rebootPreflight({ token: 'tok-newer' }) }),
      );
    api.decideApproval.mockRejectedValueOnce(
      new PreflightChangedError(
        'The impact changed since the pre-flight was taken',
        rebootPreflight({ token: 'tok-other' }),
        await responseError(409, 'Conflict', { message: 'changed' }),
      ),
    );
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    fireEvent.click(
      await within(panel).findByRole('checkbox', {
        name: 'I have reviewed this impact',
      }),
    );
    fireEvent.change(within(panel).getByTestId('approval-reason'), {
      target: { value: 'ok' },
    });
    fireEvent.click(within(panel).getByRole('button', { name: 'Approve' }));
    expect(
      await within(panel).findByTestId('approval-impact-changed'),
    ).toHaveTextContent('The impact changed since you looked');
    await waitFor(() => expect(api.getApproval).toHaveBeenCalledTimes(2));
    await waitFor(() =>
      expect(
        within(panel).getByRole('checkbox', {
          name: 'I have reviewed this impact',
        }),
      ).not.toBeChecked(),
    );
    fireEvent.click(
      within(panel).getByRole('checkbox', {
        name: 'I have reviewed this impact',
      }),
    );
    fireEvent.change(within(panel).getByTestId('approval-reason'), {
      target: { value: 'ok, again' },
    });
    fireEvent.click(within(panel).getByRole('button', { name: 'Approve' }));
    await waitFor(() =>
      expect(api.decideApproval).toHaveBeenLastCalledWith(
        'rack',
        'maintenance',
        'worker-1-reboot-abc',
        {
          decision: 'approve',
          reason: 'ok, again',
          preflightToken: 'tok-newer',
        },
      ),
    );
  });

  it('offers no Approve when the rung now is already above the acknowledged one', async () => {
    const api = apiWith(
      awaitingView({
        rungNow: 'hazard',
        now: hazardPreflight({ node: 'worker-1' }),
      }),
    );
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    expect(await within(panel).findByTestId('approval-grew')).toHaveTextContent(
      'acknowledged at the typed name rung, at the hazard rung now',
    );
    expect(
      within(panel).getByRole('button', { name: 'Approve' }),
    ).toBeDisabled();
    expect(
      within(panel).queryByRole('checkbox', {
        name: 'I have reviewed this impact',
      }),
    ).not.toBeInTheDocument();
  });

  it('says a request the guard would refuse now cannot be approved', async () => {
    const api = apiWith(awaitingView({ rungNow: 'refused' }));
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    expect(await within(panel).findByTestId('approval-grew')).toHaveTextContent(
      'It would be refused now',
    );
    expect(
      within(panel).getByRole('button', { name: 'Approve' }),
    ).toBeDisabled();
  });

  it('says why the caller may not decide, with no decision form', async () => {
    const api = apiWith(
      awaitingView({
        mayApprove: false,
        whyNot: 'You requested it: another approver must decide.',
      }),
    );
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    expect(
      await within(panel).findByTestId('approval-not-yours'),
    ).toHaveTextContent('You requested it: another approver must decide.');
    expect(
      within(panel).queryByRole('button', { name: 'Approve' }),
    ).not.toBeInTheDocument();
  });

  it('says who rejected and why once decided, and shows no panel on a maintenance without approval', async () => {
    const api = apiWith(
      awaitingView({
        state: 'rejected',
        decision: {
          decision: 'reject',
          by: 'user:default/alice',
          at: '2026-12-07T10:30:00Z',
          reason: 'not during the sale',
        },
      }),
      awaitingReboot({
        phase: 'Refused',
        terminal: true,
        approval: { rule: 'reboots-need-two' },
      } as Partial<MaintenanceResponse>),
    );
    await renderMaintenance(api);
    const status = await screen.findByTestId('approval-status');
    expect(status).toHaveAttribute('data-state', 'rejected');
    expect(status).toHaveTextContent(
      /Rejected by user:default\/alice at .*: not during the sale\./,
    );
    expect(screen.queryByTestId('approval-decision')).not.toBeInTheDocument();

    const plain = apiWith(
      awaitingView(),
      awaitingReboot({ phase: 'Draining' }),
    );
    await renderMaintenance(plain);
    await screen.findAllByTestId('maintenance-header');
    expect(plain.getApproval).not.toHaveBeenCalled();
  });
});

describe('the approval panel on the plan page', () => {
  it('shows "awaiting approval from platform-oncall", each step\'s rung then and now, and approves with the plan token', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(
      plan({
        phase: 'AwaitingApproval' as ReturnType<typeof plan>['phase'],
        waiting: undefined,
      }),
    );
    api.getApproval.mockResolvedValue(
      awaitingView({
        approvers: ['group:default/platform-oncall'],
        requestedRung: 'preflight',
        rungNow: 'preflight',
        kind: 'plan',
        name: 'reboot-plan-1',
        acknowledged: {
          by: 'user:default/ops',
          at: '2026-12-07T10:00:00Z',
          on: 'create',
          preflightTakenAt: '2026-12-07T09:59:00Z',
          rungs: { 'worker-1': 'preflight', 'worker-2': 'preflight' },
        },
        now: planPreflight(['worker-1', 'worker-2'], { token: 'plan-tok' }),
      }),
    );
    await renderWithApi(<PlanPage cluster="rack" name="reboot-plan-1" />, api);
    const panel = await screen.findByTestId('approval-panel');
    expect(
      await within(panel).findByTestId('approval-status'),
    ).toHaveTextContent('Awaiting approval from platform-oncall');
    expect(api.getApproval).toHaveBeenCalledWith(
      'rack',
      'plan',
      'reboot-plan-1',
    );
    const rows = within(panel).getAllByTestId('approval-impact-row');
    expect(rows.map(r => r.textContent)).toEqual(
      expect.arrayContaining([
        expect.stringContaining('Step of worker-1'),
        expect.stringContaining('Step of worker-2'),
      ]),
    );
    fireEvent.click(
      within(panel).getByRole('checkbox', {
        name: 'I have reviewed this impact',
      }),
    );
    fireEvent.change(within(panel).getByTestId('approval-reason'), {
      target: { value: 'go' },
    });
    fireEvent.click(within(panel).getByRole('button', { name: 'Approve' }));
    await waitFor(() =>
      expect(api.decideApproval).toHaveBeenCalledWith(
        'rack',
        'plan',
        'reboot-plan-1',
        { decision: 'approve', reason: 'go', preflightToken: 'plan-tok' },
      ),
    );
  });
});

describe('the approval panel at the hazard rung of a plan, and of a cordon', () => {
  it("asks each hazard step's node name typed out and sends them as typedNames", async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(
      plan({
        phase: 'AwaitingApproval' as ReturnType<typeof plan>['phase'],
        waiting: undefined,
      }),
    );
    const now = planPreflight(['worker-1', 'cp-1'], { token: 'plan-tok' });
    now.nodes[1] = {
      ...now.nodes[1],
      ceremony: hazardPreflight().ceremony,
    };
    api.getApproval.mockResolvedValue(
      awaitingView({
        kind: 'plan',
        name: 'reboot-plan-1',
        requestedRung: 'hazard',
        rungNow: 'hazard',
        acknowledged: undefined,
        now,
      }),
    );
    await renderWithApi(<PlanPage cluster="rack" name="reboot-plan-1" />, api);
    const panel = await screen.findByTestId('approval-panel');
    fireEvent.click(
      await within(panel).findByRole('checkbox', {
        name: 'I have reviewed this impact',
      }),
    );
    fireEvent.change(within(panel).getByTestId('approval-reason'), {
      target: { value: 'etcd team agrees' },
    });
    const approve = within(panel).getByRole('button', { name: 'Approve' });
    expect(approve).toBeDisabled();
    fireEvent.change(within(panel).getByTestId('plan-typed-name-cp-1'), {
      target: { value: 'cp-1' },
    });
    expect(approve).toBeEnabled();
    fireEvent.click(approve);
    await waitFor(() =>
      expect(api.decideApproval).toHaveBeenCalledWith(
        'rack',
        'plan',
        'reboot-plan-1',
        {
          decision: 'approve',
          reason: 'etcd team agrees',
          preflightToken: 'plan-tok',
          typedNames: ['cp-1'],
        },
      ),
    );
  });

  it('approves a cordon, which has no pre-flight, with a reason alone', async () => {
    const api = apiWith(
      awaitingView({
        requestedRung: 'reason',
        rungNow: 'reason',
        acknowledged: undefined,
        now: undefined,
      }),
      awaitingReboot({ intent: 'cordon' }),
    );
    await renderMaintenance(api);
    const panel = await screen.findByTestId('approval-panel');
    const approve = await within(panel).findByRole('button', {
      name: 'Approve',
    });
    expect(
      within(panel).queryByRole('checkbox', {
        name: 'I have reviewed this impact',
      }),
    ).not.toBeInTheDocument();
    fireEvent.change(within(panel).getByTestId('approval-reason'), {
      target: { value: 'ok for the night shift' },
    });
    fireEvent.click(approve);
    await waitFor(() =>
      expect(api.decideApproval).toHaveBeenCalledWith(
        'rack',
        'maintenance',
        'worker-1-reboot-abc',
        { decision: 'approve', reason: 'ok for the night shift' },
      ),
    );
  });
});

describe('approvalText', () => {
  it('names refs as people say them', () => {
    expect(refName('group:default/platform-oncall')).toBe('platform-oncall');
    expect(refName('user:ops/alice')).toBe('ops/alice');
    expect(approversText(['group:default/a'])).toBe('a');
    expect(
      approversText(['group:default/a', 'user:default/b', 'user:x/c']),
    ).toBe('a, b or x/c');
  });

  it('colours a held maintenance and a held plan as the Servers page chip (warning)', () => {
    expect(phaseColor('AwaitingApproval')).toBe('warning');
    expect(planPhaseColor('AwaitingApproval')).toBe('warning');
  });

  it('orders rungs as the ladder does, a refusal above all', () => {
    expect(rungAbove('preflight', 'hazard')).toBe(true);
    expect(rungAbove('hazard', 'typed-name')).toBe(false);
    expect(rungAbove('typed-name', 'typed-name')).toBe(false);
    expect(rungAbove('hazard', 'refused')).toBe(true);
    expect(rungAbove('reason', undefined)).toBe(false);
  });

  it('reads the node-local pods and the alerts as sets: the same ones in another order are unchanged, none is "none"', () => {
    const rows = impactRows(
      awaitingView({
        acknowledged: {
          takenAt: '2026-12-07T09:59:00Z',
          ceremony: 'typed-name',
          alerts: [
            { alertname: 'NodeNoisy', severity: 'warning' },
            { alertname: 'DiskFailing' },
          ],
          nodeLocalData: [
            { namespace: 'shop', name: 'db-1' },
            { namespace: 'shop', name: 'db-0' },
          ],
        },
        now: rebootPreflight({
          alerts: [
            { alertname: 'DiskFailing' },
            { alertname: 'NodeNoisy', severity: 'warning' },
          ],
          nodeLocal: [],
        }),
      }),
    );
    expect(rows.find(r => r.label === 'Alerts firing')).toMatchObject({
      acknowledged: 'DiskFailing, NodeNoisy (warning)',
      now: 'DiskFailing, NodeNoisy (warning)',
      changed: false,
    });
    expect(rows.find(r => r.label === 'Node-local data')).toMatchObject({
      acknowledged: 'shop/db-0, shop/db-1',
      now: 'none',
      changed: true,
    });
  });

  it('marks a line changed only when both sides are known and differ', () => {
    const rows = impactRows(
      awaitingView({
        acknowledged: {
          takenAt: '2026-12-07T09:59:00Z',
          ceremony: 'typed-name',
          pods: [{ namespace: 'shop', name: 'web-1' }],
        },
        now: rebootPreflight({ evict: [] }),
      }),
    );
    const pods = rows.find(r => r.label === 'Pods to evict')!;
    expect(pods).toMatchObject({ acknowledged: '1', now: '0', changed: true });
    const nodeLocal = rows.find(r => r.label === 'Node-local data')!;
    expect(nodeLocal).toMatchObject({ acknowledged: '—', changed: false });
    // A pre-flight without Alertmanager has no alerts: unknown on both sides.
    const alerts = rows.find(r => r.label === 'Alerts firing')!;
    expect(alerts).toMatchObject({
      acknowledged: '—',
      now: '—',
      changed: false,
    });
    const budgets = rows.find(r => r.label === 'Budgets in the way')!;
    expect(budgets).toMatchObject({ acknowledged: '—', changed: false });
  });
});
