import {
  ceremonyFor,
  type MaintenanceResponse,
  type PreflightResponse,
} from '@rackside/plugin-servers-common';

/** A drain pre-flight of worker-1 that can proceed: two pods, one budget. */
export function preflightResponse(
  overrides: Partial<PreflightResponse> = {},
): PreflightResponse {
  return {
    cluster: 'rack',
    node: 'worker-1',
    action: 'drain',
    takenAt: '2026-08-04T10:00:00Z',
    options: { deleteEmptyDirData: false, force: false },
    evict: [
      {
        namespace: 'shop',
        name: 'web-7d9f-abcde',
        controller: 'ReplicaSet/web-7d9f',
        gracePeriodSeconds: 30,
        terminating: false,
      },
      {
        namespace: 'shop',
        name: 'web-7d9f-fghij',
        controller: 'ReplicaSet/web-7d9f',
        gracePeriodSeconds: 30,
        terminating: true,
      },
    ],
    refused: [],
    daemonSet: [
      {
        namespace: 'monitoring',
        name: 'node-exporter-x1',
        controller: 'DaemonSet/node-exporter',
        terminating: false,
      },
    ],
    mirror: [],
    finished: [],
    budgets: [
      {
        namespace: 'shop',
        name: 'web',
        disruptionsAllowed: 1,
        pods: ['shop/web-7d9f-abcde', 'shop/web-7d9f-fghij'],
        blocksNow: false,
      },
    ],
    quorum: {
      verdict: 'allow',
      reason: 'A drain does not take a control-plane member down.',
      members: 3,
      quorum: 2,
      ready: 3,
      margin: 1,
      marginAfter: 1,
    },
    ceremony: ceremonyFor('drain', 'allow'),
    canProceed: true,
    blockers: [],
    token: 'tok-1',
    ...overrides,
  };
}

/** The same node with an emptyDir pod refused and a budget that blocks now. */
export function refusedPreflight(
  overrides: Partial<PreflightResponse> = {},
): PreflightResponse {
  return preflightResponse({
    refused: [
      {
        pod: {
          namespace: 'shop',
          name: 'cache-5c-xyz',
          controller: 'ReplicaSet/cache-5c',
          terminating: false,
        },
        causes: ['emptyDir'],
        message:
          'shop/cache-5c-xyz: it has emptyDir volumes whose data is lost on eviction (allowed with deleteEmptyDirData)',
      },
    ],
    budgets: [
      {
        namespace: 'shop',
        name: 'payments',
        disruptionsAllowed: 0,
        pods: ['shop/payments-1'],
        blocksNow: true,
      },
      {
        namespace: 'shop',
        name: 'web',
        disruptionsAllowed: 1,
        pods: ['shop/web-7d9f-abcde'],
        blocksNow: false,
      },
    ],
    canProceed: false,
    blockers: [
      'shop/cache-5c-xyz would be refused: allow deleteEmptyDirData to evict it.',
    ],
    token: 'tok-refused',
    ...overrides,
  });
}

/** A drain of worker-1 under way: 3 of 7 evicted, payments blocking. */
export function drainingMaintenance(
  overrides: Partial<MaintenanceResponse> = {},
): MaintenanceResponse {
  return {
    name: 'worker-1-drain-abc',
    nodeName: 'worker-1',
    intent: 'drain',
    reason: 'kernel update INC-7',
    requestedBy: 'user:default/ops',
    createdAt: '2026-08-04T10:00:00Z',
    phase: 'Draining',
    terminal: false,
    progress: {
      startedAt: '2026-08-04T10:00:05Z',
      total: 7,
      evicted: 3,
      pending: 4,
      pendingPods: [
        'shop/payments-1',
        'shop/web-2',
        'shop/web-3',
        'shop/api-1',
      ],
      blockedBy: [
        {
          pod: 'shop/payments-1',
          pdb: 'payments',
          message:
            "Cannot evict pod as it would violate the pod's disruption budget. The disruption budget payments needs 2 healthy pods and has 2 currently",
        },
      ],
      lastError:
        'evicting shop/api-1: the server is currently unable to handle the request (retrying in 5 s, attempt 3 of many, with exponential backoff up to 60 s)',
    },
    conditions: [],
    history: [
      { phase: 'Requested', at: '2026-08-04T10:00:00Z' },
      {
        phase: 'Cordoned',
        at: '2026-08-04T10:00:02Z',
        message: 'worker-1 marked unschedulable',
      },
      {
        phase: 'Draining',
        at: '2026-08-04T10:00:05Z',
        message: '7 pods to evict',
      },
    ],
    ...overrides,
  };
}
