import { NotFoundError } from '@backstage/errors';
import {
  machinesReadPermission,
  machinesReclaimPermission,
  type CanReclaimResponse,
  type MachinesResponse,
  type ReclaimListResponse,
} from '@rackside/plugin-servers-common';
import type { Router } from 'express';
import {
  reclaimView,
  newestObjectsFirst,
  talosClusterView,
  talosMachineView,
} from '../service/machinesView';
import {
  isAllowed,
  machinesOr404,
  requirePermission,
  type MachinesRouteContext,
} from './context';

const READ = 'see machines and reclaim requests';

/**
 * The read routes: discovery addresses and machines, reclaim requests (never
 * their credential), and whether "Reset and add" is offered. Reads never write.
 */
export function addMachineReadRoutes(
  router: Router,
  ctx: MachinesRouteContext,
) {
  router.get('/clusters/:cluster/machines', async (req, res) => {
    const credentials = await ctx.httpAuth.credentials(req);
    const state = machinesOr404(ctx, req.params.cluster);
    await requirePermission(ctx, credentials, machinesReadPermission, READ);
    const [clusters, machines] = await Promise.all([
      state.talosClusters(),
      state.talosMachines(),
    ]);
    const body: MachinesResponse = {
      cluster: state.cluster,
      namespace: state.namespace,
      talosClusters: [...clusters]
        .sort((a, b) => a.metadata.name.localeCompare(b.metadata.name))
        .map(talosClusterView),
      machines: [...machines].sort(newestObjectsFirst).map(talosMachineView),
    };
    res.json(body);
  });

  // Before `/reclaims/:name`, or "can" would be taken for a request's name.
  router.get('/clusters/:cluster/reclaims/can', async (req, res) => {
    const credentials = await ctx.httpAuth.credentials(req, {
      allow: ['user'],
    });
    const state = machinesOr404(ctx, req.params.cluster);
    let body: CanReclaimResponse;
    if (!(await isAllowed(ctx, credentials, machinesReclaimPermission))) {
      body = {
        allowed: false,
        reason: `you do not hold ${machinesReclaimPermission.name}`,
      };
    } else {
      try {
        body = await state.kubernetesReclaimAccess();
      } catch (error) {
        ctx.logger.warn(
          `cluster ${state.cluster}: could not review the reclaim access of Rackside's identity: ${error}`,
        );
        body = {
          allowed: false,
          reason: `cluster ${
            state.cluster
          } could not be asked whether Rackside may reclaim machines: ${
            (error as Error).message
          }`,
        };
      }
    }
    res.json(body);
  });

  router.get('/clusters/:cluster/reclaims', async (req, res) => {
    const credentials = await ctx.httpAuth.credentials(req);
    const state = machinesOr404(ctx, req.params.cluster);
    await requirePermission(ctx, credentials, machinesReadPermission, READ);
    const reclaims = await state.reclaims();
    const body: ReclaimListResponse = {
      items: [...reclaims].sort(newestObjectsFirst).map(reclaimView),
    };
    res.json(body);
  });

  router.get('/clusters/:cluster/reclaims/:name', async (req, res) => {
    const credentials = await ctx.httpAuth.credentials(req);
    const state = machinesOr404(ctx, req.params.cluster);
    await requirePermission(ctx, credentials, machinesReadPermission, READ);
    const cached = (await state.reclaims()).find(
      r => r.metadata.name === req.params.name,
    );
    // Just created, the watch may not have brought it yet: ask the apiserver.
    const reclaim =
      cached ??
      (await state.freshReclaim(req.params.name).catch(error => {
        if (NotFoundError.is(error)) return undefined;
        throw error;
      }));
    if (!reclaim) {
      throw new NotFoundError(
        `no reclaim request named ${req.params.name} in cluster ${state.cluster}`,
      );
    }
    res.json(reclaimView(reclaim));
  });
}
