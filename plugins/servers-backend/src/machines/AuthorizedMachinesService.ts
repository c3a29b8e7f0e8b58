/*
 * The permission checks of the machine routes, around MachinesService: each call
 * finds the cluster (404), then asks the permission framework (403 naming the
 * permission), then lets the service do the rest.
 */
import type {
  BackstageCredentials,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import { NotAllowedError } from '@backstage/errors';
import {
  AuthorizeResult,
  type BasicPermission,
} from '@backstage/plugin-permission-common';
import {
  machinesAddPermission,
  machinesReadPermission,
  machinesReclaimPermission,
  type CanReclaimResponse,
  type MachinesResponse,
  type ReclaimListResponse,
  type ReclaimResponse,
} from '@rackside/plugin-servers-common';
import type { ActionResult } from './context';
import type {
  MachineAction,
  MachineActionRequest,
  MachinesService,
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

export class AuthorizedMachinesService {
  constructor(
    private readonly inner: MachinesService,
    private readonly permissions: PermissionsService,
  ) {}

  private async isAllowed(
    credentials: BackstageCredentials,
    permission: BasicPermission,
  ): Promise<boolean> {
    const [decision] = await this.permissions.authorize([{ permission }], {
      credentials,
    });
    return decision.result === AuthorizeResult.ALLOW;
  }

  private async require(
    credentials: BackstageCredentials,
    permission: BasicPermission,
    what: string,
  ): Promise<void> {
    if (!(await this.isAllowed(credentials, permission))) {
      throw new NotAllowedError(
        `you are not allowed to ${what} (${permission.name})`,
      );
    }
  }

  /** `machines:read`. */
  async machines(
    credentials: BackstageCredentials,
    cluster: string,
  ): Promise<MachinesResponse> {
    const state = this.inner.stateOf(cluster);
    await this.require(credentials, machinesReadPermission, READ);
    return this.inner.machines(state);
  }

  /** Whether "Reset and add" is offered: `machines:reclaim`, then Rackside's own access. */
  async canReclaim(
    credentials: BackstageCredentials,
    cluster: string,
  ): Promise<CanReclaimResponse> {
    const state = this.inner.stateOf(cluster);
    if (!(await this.isAllowed(credentials, machinesReclaimPermission))) {
      return {
        allowed: false,
        reason: `you do not hold ${machinesReclaimPermission.name}`,
      };
    }
    return this.inner.kubernetesReclaimAccess(state);
  }

  /** `machines:read`. */
  async reclaims(
    credentials: BackstageCredentials,
    cluster: string,
  ): Promise<ReclaimListResponse> {
    const state = this.inner.stateOf(cluster);
    await this.require(credentials, machinesReadPermission, READ);
    return this.inner.reclaims(state);
  }

  /** `machines:read`. */
  async reclaim(
    credentials: BackstageCredentials,
    cluster: string,
    name: string,
  ): Promise<ReclaimResponse> {
    const state = this.inner.stateOf(cluster);
    await this.require(credentials, machinesReadPermission, READ);
    return this.inner.reclaim(state, name);
  }

  /** An action, under its permission (`machines:add` or `machines:reclaim`). */
  async run(
    action: MachineAction,
    cluster: string,
    request: MachineActionRequest,
  ): Promise<ActionResult> {
    const state = this.inner.stateOf(cluster);
    const { permission, what } = ACTION_PERMISSIONS[action];
    await this.require(request.credentials, permission, what);
    return this.inner.run(action, state, request);
  }
}
