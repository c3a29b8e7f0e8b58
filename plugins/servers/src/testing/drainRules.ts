import type {
  DrainPod,
  PreflightResponse,
} from '@rackside/plugin-servers-common';
import { preflightResponse } from './drain';

/** lab/db-0: a StatefulSet pod on the local PersistentVolume of worker-5. */
export const DB_POD: DrainPod = {
  namespace: 'lab',
  name: 'db-0',
  controller: 'StatefulSet/db',
  gracePeriodSeconds: 60,
  terminating: false,
  order: 10,
  statefulSet: 'db',
  nodeLocalData: [
    'PersistentVolumeClaim data-db-0 is bound to local PersistentVolume lab-db-worker-5',
  ],
};

/** lab/collector-1: a hostPath pod, evicted only with allowNodeLocalData. */
export const COLLECTOR_POD: DrainPod = {
  namespace: 'lab',
  name: 'collector-1',
  controller: 'ReplicaSet/collector',
  terminating: false,
  order: 0,
  nodeLocalData: ['hostPath volume logs (/var/log/lab)'],
};

const FRONTEND_POD: DrainPod = {
  namespace: 'lab',
  name: 'frontend-5d-aaaaa',
  controller: 'ReplicaSet/frontend-5d',
  terminating: false,
  order: 1,
};

const ARCHIVER_POD: DrainPod = {
  namespace: 'lab',
  name: 'archiver-6f-bbbbb',
  controller: 'ReplicaSet/archiver-6f',
  gracePeriodSeconds: 1800,
  terminating: false,
  order: 0,
};

const AGENT_POD: DrainPod = {
  namespace: 'lab',
  name: 'local-agent-7c-ccccc',
  controller: 'ReplicaSet/local-agent-7c',
  terminating: false,
  order: 0,
};

const REPORT_POD: DrainPod = {
  namespace: 'lab',
  name: 'nightly-report-ddddd',
  controller: 'Job/nightly-report',
  terminating: false,
  order: 0,
};

const common = {
  node: 'worker-5',
  skipped: [AGENT_POD],
  waitCompleted: [REPORT_POD],
  daemonSet: [],
  budgets: [],
} satisfies Partial<PreflightResponse>;

/**
 * A drain pre-flight of worker-5 with every class of docs/drain.md and
 * without allowNodeLocalData: the pods with data on the node are refused.
 */
export function nodeLocalRefusedPreflight(
  overrides: Partial<PreflightResponse> = {},
): PreflightResponse {
  return preflightResponse({
    ...common,
    evict: [ARCHIVER_POD, FRONTEND_POD],
    refused: [DB_POD, COLLECTOR_POD].map(pod => ({
      pod,
      causes: ['nodeLocalData'],
      message: `${pod.namespace}/${
        pod.name
      }: its data is on this node (${pod.nodeLocalData?.join(
        '; ',
      )}), so it cannot run elsewhere until worker-5 is back (allowed with allowNodeLocalData)`,
    })),
    nodeLocal: [],
    statefulSets: [],
    orderGroups: [
      { order: 0, pods: ['lab/archiver-6f-bbbbb'] },
      { order: 1, pods: ['lab/frontend-5d-aaaaa'] },
    ],
    estimate: {
      seconds: 1830,
      slowest: { pod: 'lab/archiver-6f-bbbbb', seconds: 1800 },
      groups: [
        { order: 0, seconds: 1800 },
        { order: 1, seconds: 30 },
      ],
      waitsForCompletion: ['lab/nightly-report-ddddd'],
    },
    canProceed: false,
    blockers: [
      '2 pod(s) cannot be evicted with these options: lab/collector-1 … lab/db-0 …',
    ],
    token: 'tok-local-refused',
    ...overrides,
  });
}

/** The same drain with allowNodeLocalData: the pods are evicted, db-0 last. */
export function nodeLocalAllowedPreflight(
  overrides: Partial<PreflightResponse> = {},
): PreflightResponse {
  return preflightResponse({
    ...common,
    options: {
      deleteEmptyDirData: false,
      force: false,
      allowNodeLocalData: true,
    },
    evict: [ARCHIVER_POD, COLLECTOR_POD, DB_POD, FRONTEND_POD],
    refused: [],
    nodeLocal: [COLLECTOR_POD, DB_POD],
    statefulSets: [
      {
        namespace: 'lab',
        name: 'db',
        pods: ['lab/db-0'],
        budgets: [{ name: 'db', disruptionsAllowed: 0, blocksNow: true }],
      },
    ],
    budgets: [
      {
        namespace: 'lab',
        name: 'db',
        disruptionsAllowed: 0,
        pods: ['lab/db-0'],
        blocksNow: true,
      },
    ],
    orderGroups: [
      { order: 0, pods: ['lab/archiver-6f-bbbbb', 'lab/collector-1'] },
      { order: 1, pods: ['lab/frontend-5d-aaaaa'] },
      { order: 10, pods: ['lab/db-0'] },
    ],
    estimate: {
      seconds: 1890,
      slowest: { pod: 'lab/archiver-6f-bbbbb', seconds: 1800 },
      groups: [
        { order: 0, seconds: 1800 },
        { order: 1, seconds: 30 },
        { order: 10, seconds: 60 },
      ],
      waitsForCompletion: ['lab/nightly-report-ddddd'],
    },
    canProceed: true,
    blockers: [],
    token: 'tok-local-allowed',
    ...overrides,
  });
}
