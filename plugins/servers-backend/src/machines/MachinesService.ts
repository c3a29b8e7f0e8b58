/*
 * What the machine routes do (docs/architecture.md, "The backend"), without the permission checks
 * (AuthorizedMachinesService makes those) and without HTTP (router.ts): discovery
 * addresses and discovered machines, joining a machine, and "Reset and add" requests.
 * Reads come from the watch caches and never write.
 */
import { NotFoundError } from '@backstage/errors';
import type {
  CanReclaimResponse,
  MachinesResponse,
  ReclaimListResponse,
  ReclaimResponse,
} from '@rackside/plugin-servers-common';
import type { MachinesState } from '../cluster/machinesTypes';
import {
  newestObjectsFirst,
  reclaimView,
  talosClusterView,
  talosMachineView,
} from './machinesView';
import { addDiscoveryAddress } from './addDiscoveryAddress';
import { confirmReclaim } from './confirmReclaim';
import type {
  ActionResult,
  MachineActionRequest,
  MachinesServiceOptions,
} from './context';

export type { MachineActionRequest } from './context';
import { createReclaim } from './createReclaim';
import { joinMachine } from './joinMachine';

/** The machine actions, by the name the routes use. */
export const MACHINE_ACTIONS = {
  addDiscoveryAddress,
  joinMachine,
  createReclaim,
  confirmReclaim,
} as const;

/** A machine action's name. */
export type MachineAction = keyof typeof MACHINE_ACTIONS;

export class MachinesService {
  constructor(private readonly options: MachinesServiceOptions) {}

  /** The machine state of `cluster`, or 404. */
  stateOf(cluster: string): MachinesState {
    const state = this.options.machines.get(cluster);
    if (!state) throw new NotFoundError(`no cluster named ${cluster}`);
    return state;
  }

  /** The TalosClusters and the machines discovery found. */
  async machines(state: MachinesState): Promise<MachinesResponse> {
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
  async kubernetesReclaimAccess(
    state: MachinesState,
  ): Promise<CanReclaimResponse> {
    try {
      return await state.kubernetesReclaimAccess();
    } catch (error) {
      this.options.logger.warn(
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
  async reclaims(state: MachinesState): Promise<ReclaimListResponse> {
    const reclaims = await state.reclaims();
    return { items: [...reclaims].sort(newestObjectsFirst).map(reclaimView) };
  }

  /** One reclaim request, or 404. */
  async reclaim(state: MachinesState, name: string): Promise<ReclaimResponse> {
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

  /** Carries out a machine action (every check but the permission, then the writes). */
  run(
    action: MachineAction,
    state: MachinesState,
    request: MachineActionRequest,
  ): Promise<ActionResult> {
    return MACHINE_ACTIONS[action](this.options, state, request);
  }
}
