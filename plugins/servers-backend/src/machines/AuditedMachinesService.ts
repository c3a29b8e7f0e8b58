/*
 * Every call of the machines feature is an auditor event, opened before the permission
 * checks so a denied call or an unknown cluster fails its event instead of leaving
 * none: reads as `machine-read` (low), each action as its own event with what was sent,
 * what the action learnt on the way and how it ended. An action request the edge
 * refused (no user, or a request that does not parse) is recorded too, as the same
 * event (auditRefused). The talosconfig of a reclaim is never recorded.
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
  auditRefused,
  type AuditedOptions,
  type Refusal,
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
  MachinesEdgeService,
  MachinesService,
  MachineTarget,
} from './MachinesService';

/** A string field of the body as sent, bounded, or null when it is not one. */
function sentString(sent: unknown, field: string, max = 1024) {
  const value = (sent as Record<string, unknown> | null | undefined)?.[field];
  return typeof value === 'string' ? value.slice(0, max) : null;
}

/** How an action is recorded: what is known of the request before any check. */
type ActionAudit = (
  target: MachineTarget,
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

export class AuditedMachinesService implements MachinesEdgeService {
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

  /** The event of an action request: what its target says, before any check. */
  private actionAudit(target: MachineTarget, call?: MachineCallContext) {
    return {
      auditor: this.auditor,
      request: call?.request,
      ...ACTION_AUDITS[target.action](target),
    };
  }

  /**
   * An action with its event, with what the action learns on the way (e.g. the
   * reclaim's name) on success and on failure.
   */
  private action<C, A>(
    credentials: UserCredentials,
    request: MachineRequest<C>,
    call: MachineCallContext | undefined,
    run: (call: MachineCallContext) => Promise<MachineActionResult<A>>,
  ): Promise<MachineActionResult<A>> {
    const audit = this.actionAudit(request.target, call);
    return audited(
      {
        ...audit,
        meta: { actor: credentials.principal.userEntityRef, ...audit.meta },
      },
      async record => {
        const result = await run({ ...call, learnt: record.extra });
        record.outcome = result.outcome;
        return result;
      },
    );
  }

  /**
   * Records an action request the edge refused before this service saw it: no user
   * (actor null, outcome `unauthenticated`), or a request that does not parse.
   */
  auditRefused(
    target: MachineTarget,
    error: Error,
    refusal: Refusal,
  ): Promise<void> {
    const audit = this.actionAudit(target, { request: refusal.request });
    return auditRefused(
      { ...audit, meta: { actor: refusal.actor, ...audit.meta } },
      error,
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
    credentials: UserCredentials,
    request: MachineRequest<AddDiscoveryAddressCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<DiscoveryAddressAddedResponse>> {
    return this.action(credentials, request, call, recorded =>
      this.inner.addDiscoveryAddress(credentials, request, recorded),
    );
  }

  joinMachine(
    credentials: UserCredentials,
    request: MachineRequest<JoinMachineCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<JoinMachineResponse>> {
    return this.action(credentials, request, call, recorded =>
      this.inner.joinMachine(credentials, request, recorded),
    );
  }

  createReclaim(
    credentials: UserCredentials,
    request: MachineRequest<CreateReclaimCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<ReclaimCreatedResponse>> {
    return this.action(credentials, request, call, recorded =>
      this.inner.createReclaim(credentials, request, recorded),
    );
  }

  confirmReclaim(
    credentials: UserCredentials,
    request: MachineRequest<ConfirmReclaimCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<ReclaimConfirmedResponse>> {
    return this.action(credentials, request, call, recorded =>
      this.inner.confirmReclaim(credentials, request, recorded),
    );
  }
}
