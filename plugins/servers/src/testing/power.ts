import {
  ceremonyFor,
  type MaintenanceCondition,
  type MaintenanceResponse,
  type PreflightResponse,
} from '@rackside/plugin-servers-common';
import { preflightResponse } from './drain';

/** A reboot pre-flight of `node` (worker-1 unless told) that can proceed. */
export function rebootPreflight(
  overrides: Partial<PreflightResponse> = {},
): PreflightResponse {
  return preflightResponse({
    action: 'reboot',
    quorum: {
      verdict: 'allow',
      reason: 'worker-1 is not a control-plane member; quorum is unaffected.',
      members: 3,
      quorum: 2,
      ready: 3,
      margin: 1,
      marginAfter: 1,
    },
    ceremony: ceremonyFor('reboot', 'allow'),
    token: 'tok-reboot',
    ...overrides,
  });
}

/** The reboot pre-flight of cp-1 when it spends the last of the margin. */
export function hazardPreflight(
  overrides: Partial<PreflightResponse> = {},
): PreflightResponse {
  return rebootPreflight({
    node: 'cp-1',
    evict: [],
    budgets: [],
    quorum: {
      verdict: 'hazard',
      reason:
        'Rebooting cp-1 consumes the last of the quorum margin: 2 of 3 members stay ready, exactly the quorum.',
      members: 3,
      quorum: 2,
      ready: 3,
      margin: 1,
      marginAfter: 0,
    },
    ceremony: ceremonyFor('reboot', 'hazard'),
    token: 'tok-hazard',
    ...overrides,
  });
}

/** The reboot pre-flight of cp-2 while cp-1 is down: below quorum, refused. */
export function refusedRebootPreflight(
  overrides: Partial<PreflightResponse> = {},
): PreflightResponse {
  return rebootPreflight({
    node: 'cp-2',
    evict: [],
    budgets: [],
    quorum: {
      verdict: 'refuse',
      reason:
        'Rebooting cp-2 would drop the ready control-plane members below quorum.',
      members: 3,
      quorum: 2,
      ready: 2,
      margin: 0,
      marginAfter: -1,
    },
    ceremony: ceremonyFor('reboot', 'refuse'),
    canProceed: false,
    blockers: [
      'Rebooting cp-2 would drop the ready control-plane members below quorum.',
    ],
    token: 'tok-refused-reboot',
    ...overrides,
  });
}

/** The PowerOffConfirmed condition with a status and, for Unknown, a reason. */
export function powerOffConfirmed(
  status: 'True' | 'False' | 'Unknown',
  reason?: string,
): MaintenanceCondition {
  const defaults = {
    True: 'PowerStateOff',
    False: 'ReadbackRunning',
    Unknown: 'ChannelCannotObserve',
  } as const;
  return {
    type: 'PowerOffConfirmed',
    status,
    reason: reason ?? defaults[status],
    message: 'as the operator wrote it',
    lastTransitionTime: '2026-08-07T10:00:09Z',
  };
}

/** A shutdown of `node` parked in PoweredOff with PowerOffConfirmed as told. */
export function poweredOffMaintenance(
  node: string,
  status: 'True' | 'False' | 'Unknown',
  reason?: string,
  overrides: Partial<MaintenanceResponse> = {},
): MaintenanceResponse {
  return {
    name: `${node}-shutdown-abc`,
    nodeName: node,
    intent: 'shutdown',
    reason: 'replace the PSU, INC-9',
    requestedBy: 'user:default/guest',
    createdAt: '2026-08-07T10:00:00Z',
    phase: 'PoweredOff',
    terminal: false,
    conditions: [powerOffConfirmed(status, reason)],
    history: [
      { phase: 'Requested', at: '2026-08-07T10:00:00Z' },
      { phase: 'Cordoned', at: '2026-08-07T10:00:01Z' },
      { phase: 'Draining', at: '2026-08-07T10:00:02Z' },
      { phase: 'Drained', at: '2026-08-07T10:00:03Z' },
      {
        phase: 'PoweredOff',
        at: '2026-08-07T10:00:05Z',
        message: `shutdown of ${node} accepted (ResetType GracefulShutdown); parked until powerOn or returnToService`,
      },
    ],
    poweredOffAt: '2026-08-07T10:00:05Z',
    power: {
      shutdown: {
        recordedAt: '2026-08-07T10:00:04Z',
        sentAt: '2026-08-07T10:00:05Z',
        channel: 'redfish',
        detail: 'ResetType GracefulShutdown',
      },
    },
    ...overrides,
  };
}

/** A reboot of `node` parked in Rebooting, sent over redfish. */
export function rebootingMaintenance(
  node: string,
  overrides: Partial<MaintenanceResponse> = {},
): MaintenanceResponse {
  return {
    name: `${node}-reboot-abc`,
    nodeName: node,
    intent: 'reboot',
    reason: 'firmware update, INC-11',
    requestedBy: 'user:default/guest',
    createdAt: '2026-08-07T11:00:00Z',
    phase: 'Rebooting',
    terminal: false,
    conditions: [],
    history: [
      { phase: 'Requested', at: '2026-08-07T11:00:00Z' },
      { phase: 'Cordoned', at: '2026-08-07T11:00:01Z' },
      { phase: 'Draining', at: '2026-08-07T11:00:02Z' },
      { phase: 'Drained', at: '2026-08-07T11:00:03Z' },
      {
        phase: 'Rebooting',
        at: '2026-08-07T11:00:05Z',
        message: `reboot of ${node} accepted (ResetType GracefulRestart); waiting for it to come back with a new boot ID`,
      },
    ],
    rebootSentAt: '2026-08-07T11:00:05Z',
    power: {
      reboot: {
        recordedAt: '2026-08-07T11:00:04Z',
        sentAt: '2026-08-07T11:00:05Z',
        channel: 'redfish',
        detail: 'ResetType GracefulRestart',
      },
    },
    ...overrides,
  };
}
