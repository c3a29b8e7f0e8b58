/*
 * The permission checks of the machines feature, around the machines service (as
 * AuthorizedServersService guards the servers): each call finds the cluster (404),
 * then asks the permission framework (403 naming the permission), then hands the
 * cluster it found to the inner service as the call's grant. The inner service never
 * asks back.
 */
import type {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import {
  AuthorizeResult,
  type BasicPermission,
} from '@backstage/plugin-permission-common';
import {
  machinesAddPermission,
  machinesReadPermission,
  machinesReclaimPermission,
  type CanReclaimResponse,
  type DiscoveryAddressAddedResponse,
  type JoinMachineResponse,
  type MachinesResponse,
  type ReclaimConfirmedResponse,
  type ReclaimCreatedResponse,
  type ReclaimListResponse,
  type ReclaimResponse,
} from '@rackside/plugin-servers-common';
import type { MachinesRegistry, MachinesState } from '../cluster/machinesTypes';
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
  MachineTarget,
} from './MachinesService';

const READ = 'see machines and reclaim requests';
const RECLAIM = 'reset and add machines another cluster holds';

/** The permission of each action, and what a refusal says the user may not do. */
const ACTION_PERMISSIONS: Record<
  MachineAction,
  { permission: BasicPermission; what: string }
> = {
  addDiscoveryAddress: {
    permission: machinesAddPermission,
    what: 'add discovery addresses',
  },
  joinMachine: { permission: machinesAddPermission, what: 'add machines' },
  createReclaim: { permission: machinesReclaimPermission, what: RECLAIM },
  confirmReclaim: { permission: machinesReclaimPermission, what: RECLAIM },
};

export class AuthorizedMachinesService implements MachinesService {
  constructor(
    private readonly inner: MachinesService,
    private readonly permissions: PermissionsService,
    private readonly machinesRegistry: MachinesRegistry,
  ) {}

  /** The machine side of `cluster`, or 404. */
  private stateOf(cluster: string): MachinesState {
    const state = this.machinesRegistry.get(cluster);
    if (!state) throw new NotFoundError(`no cluster named ${cluster}`);
    return state;
  }

  private async isAllowed(
    credentials: BackstageCredentials,
    permission: BasicPermission,
  ): Promise<boolean> {
    const [decision] = await this.permissions.authorize([{ permission }], {
      credentials,
    });
    return decision.result === AuthorizeResult.ALLOW;
  }

  /**
   * The cluster's 404, then `permission` (403 naming it); the call with its grant.
   */
  private async granted(
    credentials: BackstageCredentials,
    cluster: string,
    permission: BasicPermission,
    what: string,
    call: MachineCallContext | undefined,
  ): Promise<MachineCallContext> {
    const state = this.stateOf(cluster);
    if (!(await this.isAllowed(credentials, permission))) {
      throw new NotAllowedError(
        `you are not allowed to ${what} (${permission.name})`,
      );
    }
    return { ...call, grant: { state } };
  }

  /** An action, under its permission (`machines:add` or `machines:reclaim`). */
  private action(
    credentials: UserCredentials,
    { action, path }: MachineTarget,
    call: MachineCallContext | undefined,
  ): Promise<MachineCallContext> {
    const { permission, what } = ACTION_PERMISSIONS[action];
    return this.granted(credentials, path.cluster, permission, what, call);
  }

  /** `machines:read`. */
  async machines(
    credentials: BackstageCredentials,
    cluster: string,
    call?: MachineCallContext,
  ): Promise<MachinesResponse> {
    return this.inner.machines(
      credentials,
      cluster,
      await this.granted(
        credentials,
        cluster,
        machinesReadPermission,
        READ,
        call,
      ),
    );
  }

  /**
   * Whether "Reset and add" is offered: without `machines:reclaim` the answer says so
   * (not a 403: the page asks to know whether to offer it); with it, Rackside's own
   * access in the cluster decides.
   */
  async canReclaim(
    credentials: UserCredentials,
    cluster: string,
    call?: MachineCallContext,
  ): Promise<CanReclaimResponse> {
    const state = this.stateOf(cluster);
    if (!(await this.isAllowed(credentials, machinesReclaimPermission))) {
      return {
        allowed: false,
        reason: `you do not hold ${machinesReclaimPermission.name}`,
      };
    }
    return this.inner.canReclaim(credentials, cluster, {
      ...call,
      grant: { state },
    });
  }

  /** `machines:read`. */
  async reclaims(
    credentials: BackstageCredentials,
    cluster: string,
    call?: MachineCallContext,
  ): Promise<ReclaimListResponse> {
    return this.inner.reclaims(
      credentials,
      cluster,
      await this.granted(
        credentials,
        cluster,
        machinesReadPermission,
        READ,
        call,
      ),
    );
  }

  /** `machines:read`. */
  async reclaim(
    credentials: BackstageCredentials,
    cluster: string,
    name: string,
    call?: MachineCallContext,
  ): Promise<ReclaimResponse> {
    return this.inner.reclaim(
      credentials,
      cluster,
      name,
      await this.granted(
        credentials,
        cluster,
        machinesReadPermission,
        READ,
        call,
      ),
    );
  }

  async addDiscoveryAddress(
    credentials: UserCredentials,
    request: MachineRequest<AddDiscoveryAddressCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<DiscoveryAddressAddedResponse>> {
    return this.inner.addDiscoveryAddress(
      credentials,
      request,
      await this.action(credentials, request.target, call),
    );
  }

  async joinMachine(
    credentials: UserCredentials,
    request: MachineRequest<JoinMachineCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<JoinMachineResponse>> {
    return this.inner.joinMachine(
      credentials,
      request,
      await this.action(credentials, request.target, call),
    );
  }

  async createReclaim(
    credentials: UserCredentials,
    request: MachineRequest<CreateReclaimCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<ReclaimCreatedResponse>> {
    return this.inner.createReclaim(
      credentials,
      request,
      await this.action(credentials, request.target, call),
    );
  }

  async confirmReclaim(
    credentials: UserCredentials,
    request: MachineRequest<ConfirmReclaimCommand>,
    call?: MachineCallContext,
  ): Promise<MachineActionResult<ReclaimConfirmedResponse>> {
    return this.inner.confirmReclaim(
      credentials,
      request,
      await this.action(credentials, request.target, call),
    );
  }
}
