/*
 * Every call of the machines feature is an auditor event, opened before the permission
 * checks so a denied call, an unknown cluster or a request the edge could not read
 * fails its event instead of leaving none: reads as `machine-read` (low), each action as
 * its own event with what was sent, what the action learnt on the way and how it ended.
 * The talosconfig of a reclaim is never recorded.
 */
import type {
  AuditorService,
  BackstageCredentials,
} from '@backstage/backend-plugin-api';
import type {
  CanReclaimResponse,
  DiscoveryAddressAddedResponse,
  JoinMachineResponse,
  MachinesResponse,
  ReclaimConfirmedResponse,
  ReclaimCreatedResponse,
  ReclaimListResponse,
  ReclaimResponse,
} from '@rackside/plugin-servers-common';
import {
  actorOf,
  audited,
  auditUnauthenticated,
  type AuditedOptions,
} from '../lib/audited';
import { READ_SEVERITY, RECLAIM_SEVERITY } from '../lib/auditSeverity';
import type { UserCredentials } from '../lib/credentials';
import type {
  AddDiscoveryAddressCommand,
  ConfirmReclaimCommand,
  CreateReclaimCommand,
  JoinMachineCommand,
  MachineAction,
  MachineActionResult,
  MachineCallContext,
  MachineRequest,
  MachinesService,
} from './MachinesService';

/** A string field of the body as sent, bounded, or null when it is not one. */
function sentString(sent: unknown, field: string, max = 1024) {
  const value = (sent as Record<string, unknown> | null | undefined)?.[field];
  return typeof value === 'string' ? value.slice(0, max) : null;
}

/** How an action is recorded: what is known of the request before any check. */
type ActionAudit = (
  request: MachineRequest<unknown>,
) => Pick<AuditedOptions, 'eventId' | 'severityLevel' | 'meta'>;

/** The audit record of each action. */
const ACTION_AUDITS: Record<MachineAction, ActionAudit> = {
  addDiscoveryAddress: ({ path, sent }) => ({
    eventId: 'machine-discovery-address-add',
    severityLevel: 'medium',
    meta: {
      cluster: path.cluster,
      address: sentString(sent, 'address', 261),
      reason: sentString(sent, 'reason'),
    },
  }),
  joinMachine: ({ path, sent }) => ({
    eventId: 'machine-join',
    severityLevel: 'medium',
    meta: {
      cluster: path.cluster,
      machine: path.uuid.toLowerCase(),
      reason: sentString(sent, 'reason'),
    },
  }),
  createReclaim: ({ path, sent }) => {
    const ttlMinutes = (sent as Record<string, unknown> | null | undefined)
      ?.ttlMinutes;
    return {
      eventId: 'machine-reclaim-create',
      severityLevel: RECLAIM_SEVERITY,
      meta: {
        cluster: path.cluster,
        address: sentString(sent, 'address', 261),
        reason: sentString(sent, 'reason'),
        ttlMinutes: typeof ttlMinutes === 'number' ? ttlMinutes : null,
      },
    };
  },
  confirmReclaim: ({ path, sent }) => ({
    eventId: 'machine-reclaim-confirm',
    severityLevel: RECLAIM_SEVERITY,
    meta: {
      cluster: path.cluster,
      reclaim: path.name,
      typedUUID: sentString(sent, 'uuid', 64),
    },
  }),
};

export class AuditedMachinesService implements MachinesService {
  constructor(
    private readonly inner: MachinesService,
    private readonly auditor: AuditorService,
  ) {}

  /** A read with its `machine-read` event: who read what of which cluster. */
  private read<T>(
    credentials: BackstageCredentials,
    call: MachineCallContext | undefined,
    target: { read: string; cluster: string; reclaim?: string },
    run: () => Promise<T>,
  ): Promise<T> {
    return audited(
      {
        auditor: this.auditor,
        eventId: 'machine-read',
        severityLevel: READ_SEVERITY,
        request: call?.request,
        meta: {
          actor: actorOf(credentials),
          ...target,
          via: call?.via ?? 'http',
        },
      },
      run,
    );
  }

  /**
   * An action with its event: every attempt recorded, also one without a user (actor
   * null, outcome `unauthenticated`), with what the action learns on the way (e.g. the
   * reclaim's name) on success and on failure.
   */
  private async action<C, A>(
    action: MachineAction,
    request: MachineRequest<C>,
    call: MachineCallContext | undefined,
    run: (call: MachineCallContext) => Promise<MachineActionResult<A>>,
  ): Promise<MachineActionResult<A>> {
    const audit = {
      auditor: this.auditor,
      request: call?.request,
      ...ACTION_AUDITS[action](request),
    };
    if (!request.caller.ok) {
      await auditUnauthenticated(audit, request.caller.error);
      throw request.caller.error;
    }
    const actor = request.caller.value.principal.userEntityRef;
    return audited(
      { ...audit, meta: { actor, ...audit.meta } },
      async record => {
        const result = await run({ ...call, learnt: record.extra });
        record.outcome = result.outcome;
        return result;
      },
    );
  }

  machines(
    credentials: BackstageCredentials,
    cluster: string,
    call?: MachineCallContext,
  ): Promise<MachinesResponse> {
    return this.read(credentials, call, { read: 'machines', cluster }, () =>
      this.inner.machines(credentials, cluster, call),
    );
  }

  canReclaim(
    credentials: UserCredentials,
    cluster: string,
    call?: MachineCallContext,
  ): Promise<CanReclaimResponse> {
    return this.read(credentials, call, { read: 'can-reclaim', cluster }, () =>
      this.inner.canReclaim(credentials, cluster, call),
    );
  }

  reclaims(
    credentials: BackstageCredentials,
    cluster: string,
    call?: MachineCallContext,
  ): Promise<ReclaimListResponse> {
    return this.read(credentials, call, { read: 'reclaims', cluster }, () =>
      this.inner.reclaims(credentials, cluster, call),
    );
  }

  reclaim(
    credentials: BackstageCredentials,
    cluster: string,
    name: string,
    call?: MachineCallContext,
  ): Promise<ReclaimResponse> {
    return this.read(
      credentials,
      call,
      { read: 'reclaim', cluster, reclaim: name },
      () => this.inner.reclaim(credentials, cluster, name, call),
    );
  }

  addDiscoveryAddress(
    request: MachineRequest<AddDiscoveryAddressCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<DiscoveryAddressAddedResponse>> {
    return this.action('addDiscoveryAddress', request, call, audit =>
      this.inner.addDiscoveryAddress(request, audit),
    );
  }

  joinMachine(
    request: MachineRequest<JoinMachineCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<JoinMachineResponse>> {
    return this.action('joinMachine', request, call, audit =>
      this.inner.joinMachine(request, audit),
    );
  }

  createReclaim(
    request: MachineRequest<CreateReclaimCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<ReclaimCreatedResponse>> {
    return this.action('createReclaim', request, call, audit =>
      this.inner.createReclaim(request, audit),
    );
  }

  confirmReclaim(
    request: MachineRequest<ConfirmReclaimCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<ReclaimConfirmedResponse>> {
    return this.action('confirmReclaim', request, call, audit =>
      this.inner.confirmReclaim(request, audit),
    );
  }
}
