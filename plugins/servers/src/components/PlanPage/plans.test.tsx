import '@testing-library/jest-dom';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { PreflightChangedError } from '../../api';
import {
  fakeServersApi,
  responseError,
  server,
  serverList,
} from '../../testing/fixtures';
import { plan, planPreflight, renderWithApi } from '../../__testUtils__/plans';
import { ACKNOWLEDGEMENT } from '../dialogs/ceremonyText';
import { ClusterSection } from '../ServersPage/ClusterSection';
import { ClusterPlans } from '../ServersPage/ClusterPlans';
import { PlanDialog } from '../dialogs/PlanDialog';
import { PlanPage } from './PlanPage';

describe('PlanPage', () => {
  it('shows per-node progress linking each maintenance and the gate waited on', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(plan());
    await renderWithApi(<PlanPage cluster="rack" name="reboot-plan-1" />, api);
    expect(await screen.findByTestId('plan-phase')).toHaveTextContent(
      'Waiting',
    );
    expect(api.getPlan).toHaveBeenCalledWith('rack', 'reboot-plan-1');
    expect(screen.getByTestId('plan-progress')).toHaveTextContent(
      '1 of 3 done, 1 running',
    );
    expect(screen.getByTestId('plan-waiting')).toHaveTextContent(
      'Waiting on the gate podDisruptionBudgetsHealthy',
    );
    expect(screen.getByTestId('plan-waiting')).toHaveTextContent(
      'budget shop/web has 0 of 1 healthy pods',
    );
    const row = screen.getByTestId('plan-step-worker-1');
    expect(
      within(row).getByRole('link', { name: 'reboot-plan-1-worker-1' }),
    ).toHaveAttribute(
      'href',
      '/servers/maintenances/rack/reboot-plan-1-worker-1',
    );
    expect(screen.getByTestId('plan-step-worker-3')).toHaveTextContent(
      'not started',
    );
  });

  it('pauses with a reason for a user holding servers:plan, and reloads', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(plan());
    await renderWithApi(<PlanPage cluster="rack" name="reboot-plan-1" />, api);
    fireEvent.click(await screen.findByTestId('plan-pause'));
    const dialog = await screen.findByRole('dialog', {
      name: 'Pause: reboot-plan-1',
    });
    const submit = within(dialog).getByTestId('plan-pause-submit');
    expect(submit).toBeDisabled();
    fireEvent.change(within(dialog).getByLabelText(/^Reason/), {
      target: { value: 'storage cluster is degraded' },
    });
    api.getPlan.mockResolvedValue(
      plan({
        paused: true,
        phase: 'Paused',
        pause: {
          by: 'user:default/mock',
          reason: 'storage cluster is degraded',
          at: '2026-12-01T00:20:00Z',
        },
      }),
    );
    fireEvent.click(submit);
    await waitFor(() =>
      expect(api.controlPlan).toHaveBeenCalledWith(
        'rack',
        'reboot-plan-1',
        'pause',
        { reason: 'storage cluster is degraded' },
      ),
    );
    expect(await screen.findByTestId('plan-paused')).toHaveTextContent(
      'Paused by user:default/mock',
    );
    expect(screen.getByTestId('plan-resume')).toBeInTheDocument();
    expect(screen.queryByTestId('plan-pause')).not.toBeInTheDocument();
  });

  it('a plan waiting on its authorization says so and is renewed from the page, optionally without the refused servers', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(
      plan({
        phase: 'Waiting',
        authorization: {
          by: 'user:default/jane',
          at: '2026-12-01T00:00:00Z',
          until: '2026-12-01T08:00:00Z',
        },
        waiting: {
          on: 'authorization',
          message: "the plan's authorization ended at 2026-12-01T08:00:00Z",
          since: '2026-12-01T08:00:00Z',
        },
      }),
    );
    await renderWithApi(<PlanPage cluster="rack" name="reboot-plan-1" />, api);
    expect(await screen.findByTestId('plan-waiting')).toHaveTextContent(
      'Waiting for its authorization to be renewed',
    );
    expect(screen.getByTestId('plan-authorization')).toHaveTextContent(
      'Authorized by user:default/jane until',
    );
    fireEvent.click(screen.getByTestId('plan-renew'));
    const dialog = await screen.findByRole('dialog', {
      name: 'Renew authorization: reboot-plan-1',
    });
    fireEvent.change(within(dialog).getByLabelText(/^Reason/), {
      target: { value: 'the window opens tonight' },
    });
    fireEvent.click(
      within(dialog).getByLabelText(
        /Renew without the servers I may not act on/,
      ),
    );
    fireEvent.click(within(dialog).getByTestId('plan-renew-submit'));
    await waitFor(() =>
      expect(api.renewPlan).toHaveBeenCalledWith('rack', 'reboot-plan-1', {
        reason: 'the window opens tonight',
        skipRefused: true,
      }),
    );
    expect(api.controlPlan).not.toHaveBeenCalled();
  });

  it("renewing a plan with a hazard step left takes the renewer's own pre-flight and asks each hazard name typed", async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(
      plan({
        acknowledged: { 'worker-3': 'hazard' },
        authorization: {
          by: 'user:default/jane',
          at: '2026-12-01T00:00:00Z',
          until: '2026-12-01T08:00:00Z',
        },
        drain: { force: true },
        acknowledgements: [
          {
            by: 'user:default/ops',
            at: '2026-12-01T00:00:00Z',
            on: 'create',
            preflightTakenAt: '2026-12-01T00:00:00Z',
            rungs: { 'worker-1': 'typed-name', 'worker-3': 'hazard' },
          },
          {
            by: 'user:default/jane',
            at: '2026-12-01T00:00:00Z',
            on: 'renew',
            preflightTakenAt: '2026-12-01T00:00:00Z',
            rungs: { 'worker-3': 'hazard' },
          },
        ],
      }),
    );
    const pre = planPreflight(['worker-3']);
    pre.nodes[0] = {
      ...pre.nodes[0],
      ceremony: { ...pre.nodes[0].ceremony, level: 'hazard' },
    };
    api.planPreflight.mockResolvedValue({ ...pre, token: 'renew-token' });
    await renderWithApi(<PlanPage cluster="rack" name="reboot-plan-1" />, api);
    // Who acknowledged what is on the page.
    expect(
      await screen.findByTestId('plan-acknowledgements'),
    ).toHaveTextContent(
      /user:default\/ops \(created .*: worker-1, worker-3\); user:default\/jane \(renewed .*: worker-3\)/,
    );
    fireEvent.click(await screen.findByTestId('plan-renew'));
    const dialog = await screen.findByRole('dialog', {
      name: 'Renew authorization: reboot-plan-1',
    });
    // The pre-flight of the steps not started yet, as the plan runs them.
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenCalledWith('rack', {
        intent: 'reboot',
        nodes: ['worker-3'],
        maxParallel: 2,
        force: true,
      }),
    );
    expect(
      await within(dialog).findByTestId('plan-renew-acknowledgement'),
    ).toHaveTextContent('worker-3 is at the hazard rung now');
    fireEvent.change(within(dialog).getByLabelText(/^Reason/), {
      target: { value: 'the window opens tonight' },
    });
    const submit = within(dialog).getByTestId('plan-renew-submit');
    expect(submit).toBeDisabled();
    fireEvent.change(within(dialog).getByTestId('plan-typed-name-worker-3'), {
      target: { value: 'worker-3' },
    });
    expect(submit).toBeEnabled();
    fireEvent.click(submit);
    await waitFor(() =>
      expect(api.renewPlan).toHaveBeenCalledWith('rack', 'reboot-plan-1', {
        reason: 'the window opens tonight',
        preflightToken: 'renew-token',
        typedNames: ['worker-3'],
      }),
    );
  });

  it('offers no controls on a finished plan, even with servers:plan', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(
      plan({ phase: 'Complete', waiting: undefined }),
    );
    await renderWithApi(<PlanPage cluster="rack" name="reboot-plan-1" />, api);
    expect(await screen.findByTestId('plan-phase')).toHaveTextContent(
      'Complete',
    );
    expect(screen.queryByTestId('plan-pause')).not.toBeInTheDocument();
    expect(screen.queryByTestId('plan-cancel')).not.toBeInTheDocument();
  });

  it('says so when there is no such plan', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockRejectedValue(
      await responseError(404, 'Not Found', {
        name: 'NotFoundError',
        message: 'no plan',
      }),
    );
    await renderWithApi(<PlanPage cluster="rack" name="gone" />, api);
    expect(
      await screen.findByText(
        'There is no maintenance plan gone in cluster rack.',
      ),
    ).toBeInTheDocument();
  });
});

describe('ClusterPlans', () => {
  it('lists the plans of a cluster with links, and nothing when there are none', async () => {
    const api = fakeServersApi(serverList([]));
    // The page asks the open plans and the last finished ones (a page each).
    api.listPlans.mockImplementation(async (_cluster, query) => ({
      items: query?.state === 'open' ? [plan()] : [],
    }));
    await renderWithApi(<ClusterPlans cluster="rack" />, api);
    expect(api.listPlans).toHaveBeenCalledWith('rack', {
      state: 'finished',
      limit: 5,
    });
    expect(
      await screen.findByRole('link', { name: 'reboot-plan-1' }),
    ).toHaveAttribute('href', '/servers/plans/rack/reboot-plan-1');
    expect(screen.getByTestId('cluster-plans-rack')).toHaveTextContent(
      'rolling reboot, 1 of 3 done, 1 running',
    );
  });

  it('renders nothing for a cluster without plans', async () => {
    const api = fakeServersApi(serverList([]));
    await renderWithApi(<ClusterPlans cluster="rack" />, api);
    await waitFor(() =>
      expect(api.listPlans).toHaveBeenCalledWith('rack', expect.anything()),
    );
    expect(screen.queryByTestId('cluster-plans-rack')).not.toBeInTheDocument();
  });
});

describe('PlanDialog', () => {
  const NODES = ['worker-1', 'worker-2', 'worker-3'];

  async function openDialog(api: ReturnType<typeof fakeServersApi>) {
    const onClose = jest.fn();
    await renderWithApi(
      <PlanDialog cluster="rack" nodes={NODES} onClose={onClose} />,
      api,
    );
    return onClose;
  }

  it('shows the plan pre-flight per step and per node with the estimate', async () => {
    const api = fakeServersApi(serverList([]));
    api.planPreflight.mockResolvedValue(planPreflight(NODES));
    await openDialog(api);
    expect(await screen.findByTestId('plan-estimate-total')).toHaveTextContent(
      '3 servers in 2 steps, about 1 min of draining in all',
    );
    const steps = screen.getByTestId('plan-preflight-steps');
    expect(steps).toHaveTextContent('Step 1: worker-1, worker-2, about 30 s');
    expect(steps).toHaveTextContent('Step 2: worker-3, about 30 s');
    expect(
      screen.getByTestId('plan-preflight-node-worker-3'),
    ).toHaveTextContent('worker-32');
    expect(api.planPreflight).toHaveBeenLastCalledWith('rack', {
      intent: 'drain',
      nodes: NODES,
      maxParallel: 1,
    });
  });

  it('a reboot needs reason, acknowledgement and the typed count; sends the token', async () => {
    const api = fakeServersApi(serverList([]));
    api.planPreflight.mockResolvedValue(planPreflight(NODES));
    api.createPlan.mockResolvedValue({ name: 'reboot-plan-abc' });
    await openDialog(api);
    fireEvent.click(await screen.findByLabelText('Reboot'));
    fireEvent.change(screen.getByTestId('plan-max-parallel'), {
      target: { value: '2' },
    });
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenLastCalledWith('rack', {
        intent: 'reboot',
        nodes: NODES,
        maxParallel: 2,
      }),
    );
    const submit = await screen.findByTestId('plan-submit');
    fireEvent.change(await screen.findByLabelText(/^Reason/), {
      target: { value: 'kernel update INC-9' },
    });
    fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
    expect(submit).toBeDisabled();
    const count = screen.getByLabelText(
      /Type the number of servers to reboot \(3\)/,
    );
    fireEvent.change(count, { target: { value: '2' } });
    expect(screen.getByText('That is not 3.')).toBeInTheDocument();
    expect(submit).toBeDisabled();
    fireEvent.change(count, { target: { value: '3' } });
    expect(submit).toBeEnabled();
    fireEvent.click(submit);
    expect(
      await screen.findByRole('link', { name: 'reboot-plan-abc' }),
    ).toHaveAttribute('href', '/servers/plans/rack/reboot-plan-abc');
    expect(api.createPlan).toHaveBeenCalledWith('rack', {
      intent: 'reboot',
      nodes: NODES,
      maxParallel: 2,
      reason: 'kernel update INC-9',
      preflightToken: 'plan-token-1',
      typedCount: 3,
    });
  });

  it('a step at the hazard rung asks for its node name typed, as a single hazard reboot does, and sends it', async () => {
    const api = fakeServersApi(serverList([]));
    const pre = planPreflight(['worker-1', 'cp-1', 'cp-2']);
    pre.nodes[1].ceremony = { ...pre.nodes[1].ceremony, level: 'hazard' };
    pre.nodes[2].ceremony = { ...pre.nodes[2].ceremony, level: 'hazard' };
    api.planPreflight.mockResolvedValue(pre);
    api.createPlan.mockResolvedValue({ name: 'reboot-plan-cp' });
    await renderWithApi(
      <PlanDialog
        cluster="rack"
        nodes={['worker-1', 'cp-1', 'cp-2']}
        onClose={jest.fn()}
      />,
      api,
    );
    fireEvent.click(await screen.findByLabelText('Reboot'));
    const submit = await screen.findByTestId('plan-submit');
    fireEvent.change(await screen.findByLabelText(/^Reason/), {
      target: { value: 'etcd upgrade INC-12' },
    });
    fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
    fireEvent.change(
      screen.getByLabelText(/Type the number of servers to reboot \(3\)/),
      { target: { value: '3' } },
    );
    // The typed count alone is not the hazard ceremony.
    expect(screen.getByTestId('plan-hazard')).toHaveTextContent(
      'This consumes the last of the quorum margin',
    );
    expect(submit).toBeDisabled();
    fireEvent.change(screen.getByTestId('plan-typed-name-cp-1'), {
      target: { value: 'cp-1' },
    });
    expect(submit).toBeDisabled();
    fireEvent.change(screen.getByTestId('plan-typed-name-cp-2'), {
      target: { value: 'cp-3' },
    });
    expect(screen.getByText('That is not cp-2.')).toBeInTheDocument();
    expect(submit).toBeDisabled();
    fireEvent.change(screen.getByTestId('plan-typed-name-cp-2'), {
      target: { value: 'cp-2' },
    });
    expect(submit).toBeEnabled();
    fireEvent.click(submit);
    await waitFor(() =>
      expect(api.createPlan).toHaveBeenCalledWith(
        'rack',
        expect.objectContaining({
          typedCount: 3,
          typedNames: ['cp-1', 'cp-2'],
        }),
      ),
    );
  });

  it('a 409 shows the new pre-flight and asks for the acknowledgement again', async () => {
    const api = fakeServersApi(serverList([]));
    api.planPreflight.mockResolvedValue(planPreflight(NODES));
    const fresh = planPreflight(NODES, {
      token: 'plan-token-2',
      estimate: { seconds: 600 },
    });
    const conflict = await responseError(409, 'Conflict', {
      name: 'ConflictError',
      message: 'the impact changed since the pre-flight was acknowledged',
    });
    api.createPlan.mockRejectedValue(
      new PreflightChangedError(
        'the impact changed since the pre-flight was acknowledged',
        fresh as any,
        conflict,
      ),
    );
    await openDialog(api);
    fireEvent.change(await screen.findByLabelText(/^Reason/), {
      target: { value: 'kernel update INC-9' },
    });
    fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
    fireEvent.click(screen.getByTestId('plan-submit'));
    expect(
      await screen.findByTestId('plan-impact-changed'),
    ).toBeInTheDocument();
    expect(screen.getByTestId('plan-estimate-total')).toHaveTextContent(
      'about 10 min of draining',
    );
    expect(screen.getByLabelText(ACKNOWLEDGEMENT)).not.toBeChecked();
    expect(screen.getByTestId('plan-submit')).toBeDisabled();
  });

  it('shows the blockers and offers no ceremony when the plan cannot start', async () => {
    const api = fakeServersApi(serverList([]));
    api.planPreflight.mockResolvedValue(
      planPreflight(NODES, {
        canProceed: false,
        blockers: ['worker-2: 1 pod(s) cannot be evicted with these options'],
      }),
    );
    await openDialog(api);
    expect(await screen.findByTestId('plan-blockers')).toHaveTextContent(
      'worker-2: 1 pod(s) cannot be evicted',
    );
    expect(screen.queryByLabelText(ACKNOWLEDGEMENT)).not.toBeInTheDocument();
    expect(screen.getByTestId('plan-submit')).toBeDisabled();
  });

  it('a refused pod offers the drain options; one turned on asks again and is sent', async () => {
    const api = fakeServersApi(serverList([]));
    const blocked = planPreflight(NODES, {
      canProceed: false,
      blockers: ['worker-2: 1 pod(s) cannot be evicted with these options'],
    });
    blocked.nodes[1].refused = [
      {
        pod: { namespace: 'shop', name: 'cache-1' },
        causes: ['emptyDir'],
        message: 'shop/cache-1 has emptyDir data',
      } as any,
    ];
    api.planPreflight.mockImplementation(async (_cluster, query) =>
      query.deleteEmptyDirData ? planPreflight(NODES) : blocked,
    );
    await openDialog(api);
    const option = await screen.findByLabelText(
      'Also evict pods with emptyDir volumes',
    );
    fireEvent.click(option);
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenLastCalledWith('rack', {
        intent: 'drain',
        nodes: NODES,
        maxParallel: 1,
        deleteEmptyDirData: true,
      }),
    );
    fireEvent.change(await screen.findByLabelText(/^Reason/), {
      target: { value: 'kernel update INC-9' },
    });
    fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
    fireEvent.click(screen.getByTestId('plan-submit'));
    await waitFor(() =>
      expect(api.createPlan).toHaveBeenCalledWith(
        'rack',
        expect.objectContaining({
          drain: {
            deleteEmptyDirData: true,
            force: false,
            allowNodeLocalData: false,
          },
        }),
      ),
    );
  });
});

describe('selection on the Servers page', () => {
  it('selects by hand or all matching the filter and plans the selected servers', async () => {
    const api = fakeServersApi(
      serverList([
        server('cp-1', { controlPlane: true }),
        server('worker-1'),
        server('worker-2'),
        server('worker-3'),
      ]),
    );
    api.planPreflight.mockResolvedValue(
      planPreflight(['worker-1', 'worker-3']),
    );
    await renderWithApi(<ClusterSection cluster="rack" />, api);
    const one = await screen.findByRole('checkbox', {
      name: 'Select worker-1',
    });
    fireEvent.click(one);
    fireEvent.click(screen.getByRole('checkbox', { name: 'Select worker-3' }));
    expect(screen.getByTestId('plan-selected-rack')).toHaveTextContent(
      '2 selected',
    );
    const open = screen.getByTestId('plan-open-rack');
    open.focus();
    fireEvent.click(open);
    await screen.findByTestId('plan-preflight');
    expect(api.planPreflight).toHaveBeenLastCalledWith('rack', {
      intent: 'drain',
      nodes: ['worker-1', 'worker-3'],
      maxParallel: 1,
    });
    fireEvent.click(screen.getByRole('button', { name: 'Close' }));
    await waitFor(() =>
      expect(screen.queryByTestId('plan-dialog')).not.toBeInTheDocument(),
    );
    // The focus goes back to the button that opened the dialog.
    await waitFor(() => expect(open).toHaveFocus());

    fireEvent.change(screen.getByLabelText('Filter servers of rack'), {
      target: { value: 'worker-' },
    });
    fireEvent.click(
      await screen.findByRole('button', {
        name: 'Select all matching the filter',
      }),
    );
    await waitFor(() =>
      expect(screen.getByTestId('plan-selected-rack')).toHaveTextContent(
        '3 selected',
      ),
    );
    fireEvent.click(screen.getByRole('button', { name: 'Clear selection' }));
    expect(screen.getByTestId('plan-selected-rack')).toHaveTextContent(
      '0 selected',
    );
    expect(screen.getByTestId('plan-open-rack')).toBeDisabled();
  });
});
