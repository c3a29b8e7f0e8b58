import '@testing-library/jest-dom';
import { mockApis, renderInTestApp } from '@backstage/frontend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import type {
  PlanPreflightResponse,
  PlanResponse,
} from '@rackside/plugin-servers-common';
import { PreflightChangedError, serversApiRef } from '../../api';
import {
  fakeServersApi,
  responseError,
  serverList,
} from '../../testing/fixtures';
import { rebootPreflight } from '../../testing/power';
import { ACKNOWLEDGEMENT } from '../ActionDialog';
import { ServersLinksProvider } from '../links';
import { ClusterPlans } from './ClusterPlans';
import { PlanDialog } from './PlanDialog';
import { PlanPage } from './PlanPage';

const LINKS = {
  servers: () => '/servers',
  maintenance: (c: string, n: string) => `/servers/maintenances/${c}/${n}`,
  plan: (c: string, n: string) => `/servers/plans/${c}/${n}`,
};

function plan(extra: Partial<PlanResponse> = {}): PlanResponse {
  return {
    cluster: 'rack',
    name: 'reboot-plan-1',
    intent: 'reboot',
    phase: 'Waiting',
    maxParallel: 2,
    reason: 'kernel update INC-9',
    requestedBy: 'user:default/ops',
    createdAt: '2026-12-01T00:00:00Z',
    nodes: [
      {
        name: 'worker-1',
        controlPlane: false,
        phase: 'Done',
        maintenance: 'reboot-plan-1-worker-1',
      },
      {
        name: 'worker-2',
        controlPlane: false,
        phase: 'Running',
        maintenance: 'reboot-plan-1-worker-2',
      },
      { name: 'worker-3', controlPlane: false, phase: 'Pending' },
    ],
    counts: {
      total: 3,
      pending: 1,
      running: 1,
      done: 1,
      failed: 0,
      refused: 0,
      skipped: 0,
    },
    waiting: {
      on: 'gate',
      gate: 'podDisruptionBudgetsHealthy',
      message: 'budget shop/web has 0 of 1 healthy pods',
      since: '2026-12-01T00:10:00Z',
    },
    failurePolicy: { tolerate: 0 },
    onCancel: 'finish',
    paused: false,
    ...extra,
  };
}

function permission(allowPlan: boolean) {
  return mockApis.permission({
    authorize: request =>
      request.permission.name === 'servers:plan' && !allowPlan
        ? AuthorizeResult.DENY
        : AuthorizeResult.ALLOW,
  });
}

function renderWithApi(
  element: JSX.Element,
  api: ReturnType<typeof fakeServersApi>,
  allowPlan = true,
) {
  return renderInTestApp(
    <ServersLinksProvider links={LINKS}>{element}</ServersLinksProvider>,
    {
      apis: [
        [serversApiRef, api],
        [permissionApiRef, permission(allowPlan)],
      ] as any,
    },
  );
}

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

  it('offers no controls without servers:plan', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(plan());
    await renderWithApi(
      <PlanPage cluster="rack" name="reboot-plan-1" />,
      api,
      false,
    );
    await screen.findByTestId('plan-phase');
    expect(screen.queryByTestId('plan-pause')).not.toBeInTheDocument();
    expect(screen.queryByTestId('plan-cancel')).not.toBeInTheDocument();
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
    api.listPlans.mockResolvedValue([plan()]);
    await renderWithApi(<ClusterPlans cluster="rack" />, api);
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
    await waitFor(() => expect(api.listPlans).toHaveBeenCalledWith('rack'));
    expect(screen.queryByTestId('cluster-plans-rack')).not.toBeInTheDocument();
  });
});

/** A plan pre-flight of these workers, each as the single reboot pre-flight. */
function planPreflight(
  nodes: string[],
  extra: Partial<PlanPreflightResponse> = {},
): PlanPreflightResponse {
  const single = rebootPreflight();
  const { token: _token, ...impact } = single;
  return {
    cluster: 'rack',
    intent: 'reboot',
    takenAt: '2026-12-01T00:00:00Z',
    maxParallel: 2,
    nodes: nodes.map((node, i) => ({
      ...impact,
      node,
      controlPlane: false,
      step: Math.floor(i / 2),
      estimate: { seconds: 30, groups: [] } as any,
    })),
    steps: [
      {
        index: 0,
        nodes: nodes.slice(0, 2),
        controlPlane: false,
        estimateSeconds: 30,
        quorum: impact.quorum,
      },
      {
        index: 1,
        nodes: nodes.slice(2),
        controlPlane: false,
        estimateSeconds: 30,
        quorum: impact.quorum,
      },
    ],
    budgets: [],
    estimate: { seconds: 60 },
    typedCount: nodes.length,
    canProceed: true,
    blockers: [],
    token: 'plan-token-1',
    ...extra,
  };
}

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
});
