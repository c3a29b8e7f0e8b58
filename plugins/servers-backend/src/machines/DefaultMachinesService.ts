/*
 * The machines feature within what each call was granted (MachinesService.ts): the reads
 * from the watch caches, and the requests as commands (commands/). It never asks the
 * permission framework; a call without a grant is refused, so this service is never
 * reachable around AuthorizedMachinesService.
 */
import type { BackstageCredentials } from '@backstage/backend-plugin-api';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
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
import { addDiscoveryAddress } from './commands/addDiscoveryAddress';
import { confirmReclaim } from './commands/confirmReclaim';
import { createReclaim } from './commands/createReclaim';
import { joinMachine } from './commands/joinMachine';
import {
  newestObjectsFirst,
  reclaimView,
  talosClusterView,
  talosMachineView,
} from './machinesView';
import type { UserCredentials } from '../lib/credentials';
import type {
  AddDiscoveryAddressCommand,
  ConfirmReclaimCommand,
  CreateReclaimCommand,
  JoinMachineCommand,
  MachineActionResult,
  MachineCallContext,
  MachineCommandContext,
  MachineGrant,
  MachineRequest,
  MachinesService,
} from './MachinesService';

/** What the call was granted; none is a refusal (fail closed). */
function grantOf(call: MachineCallContext | undefined): MachineGrant {
  if (!call?.grant) {
    throw new NotAllowedError('no permission decision was made for this call');
  }
  return call.grant;
}

/** A command of commands/: the context, the user, the typed command, the grant, what it learns. */
type MachineCommand<C, A> = (
  ctx: MachineCommandContext,
  user: string,
  command: C,
  grant: MachineGrant,
  learnt: Record<string, unknown>,
) => Promise<MachineActionResult<A>>;

export class DefaultMachinesService implements MachinesService {
  constructor(private readonly ctx: MachineCommandContext) {}

  /** Runs an action's command within the call's grant. */
  private async run<C, A>(
    command: MachineCommand<C, A>,
    credentials: UserCredentials,
    request: MachineRequest<C>,
    call: MachineCallContext | undefined,
  ): Promise<MachineActionResult<A>> {
    const grant = grantOf(call);
    return command(
      this.ctx,
      credentials.principal.userEntityRef,
      request.command,
      grant,
      call?.learnt ?? {},
    );
  }

  async machines(
    _credentials: BackstageCredentials,
    _cluster: string,
    call?: MachineCallContext,
  ): Promise<MachinesResponse> {
    const { state } = grantOf(call);
    const [clusters, machines] = await Promise.all([
      state.talosClusters(),
      state.talosMachines(),
    ]);
    return {
      cluster: state.cluster,
      namespace: state.namespace,
      talosClusters: [...clusters]
        .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
        .map(talosClusterView),
      machines: [...machines].sort(newestObjectsFirst).map(talosMachineView),
    };
  }

  /** Whether Rackside's own identity may reclaim machines in this cluster. */
  async canReclaim(
    _credentials: UserCredentials,
    _cluster: string,
    call?: MachineCallContext,
  ): Promise<CanReclaimResponse> {
    const { state } = grantOf(call);
    try {
      return await state.kubernetesReclaimAccess();
    } catch (error) {
      this.ctx.logger.warn(
        `cluster ${state.cluster}: could not review the reclaim access of Rackside's identity: ${error}`,
      );
      return {
        allowed: false,
        reason: `cluster ${
          state.cluster
        } could not be asked whether Rackside may reclaim machines: ${
          (error as Error).message
        }`,
      };
    }
  }

  /** The reclaim requests, newest first (never their credential). */
  async reclaims(
    _credentials: BackstageCredentials,
    _cluster: string,
    call?: MachineCallContext,
  ): Promise<ReclaimListResponse> {
    const { state } = grantOf(call);
    const reclaims = await state.reclaims();
    return { items: [...reclaims].sort(newestObjectsFirst).map(reclaimView) };
  }

  async reclaim(
    _credentials: BackstageCredentials,
    _cluster: string,
    name: string,
    call?: MachineCallContext,
  ): Promise<ReclaimResponse> {
    const { state } = grantOf(call);
    const cached = (await state.reclaims()).find(r => r.metadata.name === name);
    // Just created, the watch may not have brought it yet: ask the apiserver.
    const reclaim =
      cached ??
      (await state.freshReclaim(name).catch(error => {
        if (NotFoundError.is(error)) return undefined;
        throw error;
      }));
    if (!reclaim) {
      throw new NotFoundError(
        `no reclaim request named ${name} in cluster ${state.cluster}`,
      );
    }
    return reclaimView(reclaim);
  }

  addDiscoveryAddress(
    credentials: UserCredentials,
    request: MachineRequest<AddDiscoveryAddressCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<DiscoveryAddressAddedResponse>> {
    return this.run(addDiscoveryAddress, credentials, request, call);
  }

  joinMachine(
    credentials: UserCredentials,
    request: MachineRequest<JoinMachineCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<JoinMachineResponse>> {
    return this.run(joinMachine, credentials, request, call);
  }

  createReclaim(
    credentials: UserCredentials,
    request: MachineRequest<CreateReclaimCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<ReclaimCreatedResponse>> {
    return this.run(createReclaim, credentials, request, call);
  }

  confirmReclaim(
    credentials: UserCredentials,
    request: MachineRequest<ConfirmReclaimCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<ReclaimConfirmedResponse>> {
    return this.run(confirmReclaim, credentials, request, call);
  }
}
