import { NotFoundError } from '@backstage/errors';
import {
  machinesReadPermission,
  machinesReclaimPermission,
  type CanReclaimResponse,
  type MachinesResponse,
  type ReclaimListResponse,
} from '@rackside/plugin-servers-common';
import type { Request, Response, Router } from 'express';
import {
  reclaimView,
  newestObjectsFirst,
  talosClusterView,
  talosMachineView,
} from '../service/machinesView';
import { audited } from '../lib/audited';
import { READ_SEVERITY } from '../service/auditSeverity';
import {
  isAllowed,
  machinesOr404,
  requirePermission,
  type MachinesRouteContext,
} from './context';

const READ = 'see machines and reclaim requests';

/**
 * A read route with its auditor event (`machine-read`, severity low, DESIGN section 7):
 * who read what of which cluster, and how it ended. The caller is authenticated first
 * (401 as before; the auditor names the actor from the request).
 */
function readRoute(
  ctx: MachinesRouteContext,
  read: string,
  handler: (req: Request, res: Response) => Promise<void>,
) {
  return async (req: Request, res: Response) => {
    const credentials = await ctx.httpAuth.credentials(req);
    const principal = credentials.principal as {
      userEntityRef?: string;
      subject?: string;
    };
    const meta = {
      actor: principal.userEntityRef ?? principal.subject ?? null,
      read,
      cluster: req.params.cluster,
      ...(req.params.name ? { reclaim: req.params.name } : {}),
      via: 'http',
    };
    await audited(
      {
        auditor: ctx.auditor,
        eventId: 'machine-read',
        severityLevel: READ_SEVERITY,
        request: req,
        meta,
      },
      () => handler(req, res),
    );
  };
}

/**
 * The read routes: discovery addresses and machines, reclaim requests (never
 * their credential), and whether "Reset and add" is offered. Reads never write.
 */
export function addMachineReadRoutes(
  router: Router,
  ctx: MachinesRouteContext,
) {
  router.get(
    '/clusters/:cluster/machines',
    readRoute(ctx, 'machines', async (req, res) => {
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
    }),
  );

  // Before `/reclaims/:name`, or "can" would be taken for a request's name.
  router.get(
    '/clusters/:cluster/reclaims/can',
    readRoute(ctx, 'can-reclaim', async (req, res) => {
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
    }),
  );

  router.get(
    '/clusters/:cluster/reclaims',
    readRoute(ctx, 'reclaims', async (req, res) => {
      const credentials = await ctx.httpAuth.credentials(req);
      const state = machinesOr404(ctx, req.params.cluster);
      await requirePermission(ctx, credentials, machinesReadPermission, READ);
      const reclaims = await state.reclaims();
      const body: ReclaimListResponse = {
        items: [...reclaims].sort(newestObjectsFirst).map(reclaimView),
      };
      res.json(body);
    }),
  );

  router.get(
    '/clusters/:cluster/reclaims/:name',
    readRoute(ctx, 'reclaim', async (req, res) => {
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
    }),
  );
}
