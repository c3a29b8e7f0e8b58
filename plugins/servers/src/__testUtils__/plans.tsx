/*
 * Maintenance plans as the plan tests need them: a plan, a plan pre-flight, and a
 * render with the Servers API, links and a permission API that allows or denies
 * servers:plan.
 */
import { mockApis, renderInTestApp } from '@backstage/frontend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import type {
  PlanPreflightResponse,
  PlanResponse,
} from '@rackside/plugin-servers-common';
import { serversApiRef } from '../api';
import { ServersLinksProvider } from '../components/ui/links';
import type { fakeServersApi } from '../testing/fixtures';
import { rebootPreflight } from '../testing/power';

const LINKS = {
  servers: () => '/servers',
  maintenance: (c: string, n: string) => `/servers/maintenances/${c}/${n}`,
  plan: (c: string, n: string) => `/servers/plans/${c}/${n}`,
};

export function plan(extra: Partial<PlanResponse> = {}): PlanResponse {
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

export function renderWithApi(
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

/** A plan pre-flight of these workers, each as the single reboot pre-flight. */
export function planPreflight(
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
