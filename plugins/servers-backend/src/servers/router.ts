import type {
  BackstageCredentials,
  BackstageUserPrincipal,
  HttpAuthService,
} from '@backstage/backend-plugin-api';
import { InputError } from '@backstage/errors';
import type { ActionResponse } from '@rackside/plugin-servers-common';
import express from 'express';
import Router from 'express-promise-router';
import { jsonBody } from '../lib/jsonBody';
import {
  parsePlanPreflightQuery,
  type PlansService,
} from '../service/PlansService';
import { PreflightConflictError } from '../service/preflight';
import { parseServerListQuery } from '../service/serverList';
import type { AuthorizedServersService } from './AuthorizedServersService';

export { QuorumRefusedError } from './ServersService';

/** Options of {@link createRouter}. */
export interface RouterOptions {
  service: AuthorizedServersService;
  /** The maintenance plan routes (DESIGN section 15); absent: not served. */
  plans?: PlansService;
  httpAuth: HttpAuthService;
}

/** A 409 whose new pre-flight travels with it, so the dialog can show it at once. */
function sendPreflightConflict(
  req: express.Request,
  res: express.Response,
  error: PreflightConflictError<unknown>,
) {
  res.status(409).json({
    error: { name: error.name, message: error.message },
    request: { method: req.method, url: req.originalUrl },
    response: { statusCode: 409 },
    preflight: error.preflight,
  });
}

/** `true` / `false` / absent in a query string; anything else is a 400. */
function queryFlag(value: unknown, name: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new InputError(`${name} must be true or false`);
}

/**
 * Builds the `/api/servers` routes: HTTP in and out of {@link AuthorizedServersService}
 * (the permission checks) and its ServersService (every other check); the actions
 * registry calls the same service.
 */
export async function createRouter(
  options: RouterOptions,
): Promise<express.Router> {
  const { service, plans, httpAuth } = options;
  const router = Router();
  router.use(jsonBody());

  // Unauthenticated on purpose: load balancers and the demo script probe it.
  router.get('/health', (_req, res) => {
    res.json({ status: 'ok' });
  });

  router.get('/clusters', async (req, res) => {
    res.json(
      await service.listClusters(await httpAuth.credentials(req), {
        request: req,
      }),
    );
  });

  router.get('/clusters/:cluster/servers', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    // No window parameters: the whole list, as always (a contract). With `limit`,
    // `continue`, `filter`, `sort` or `direction`: one window of it (service/serverList.ts).
    const query = parseServerListQuery(req.query as Record<string, unknown>);
    const list = await service.listServersJson(
      credentials,
      req.params.cluster,
      query,
      { request: req },
    );
    // Our own entity tag (express would hash the whole body): a page that polls gets a
    // 304 while nothing it shows has changed.
    res.set('ETag', list.etag);
    res.type('application/json').send(list.body);
  });

  router.get('/clusters/:cluster/servers/:node', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    res.json(
      await service.getServer(
        credentials,
        req.params.cluster,
        req.params.node,
        { request: req },
      ),
    );
  });

  router.get('/clusters/:cluster/maintenances', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    const node =
      typeof req.query.node === 'string' ? req.query.node : undefined;
    res.json(
      await service.listMaintenances(credentials, req.params.cluster, node, {
        request: req,
      }),
    );
  });

  router.get('/clusters/:cluster/maintenances/:name', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    res.json(
      await service.getMaintenance(
        credentials,
        req.params.cluster,
        req.params.name,
        { request: req },
      ),
    );
  });

  router.get('/clusters/:cluster/servers/:node/preflight', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    res.json(
      await service.preflight(
        credentials,
        req.params.cluster,
        req.params.node,
        String(req.query.action ?? ''),
        {
          deleteEmptyDirData: queryFlag(
            req.query.deleteEmptyDirData,
            'deleteEmptyDirData',
          ),
          force: queryFlag(req.query.force, 'force'),
          allowNodeLocalData: queryFlag(
            req.query.allowNodeLocalData,
            'allowNodeLocalData',
          ),
        },
        { request: req },
      ),
    );
  });

  router.post(
    '/clusters/:cluster/servers/:node/actions/:action',
    async (req, res) => {
      const target = {
        cluster: req.params.cluster,
        node: req.params.node,
        action: req.params.action,
      };
      let credentials: BackstageCredentials<BackstageUserPrincipal>;
      try {
        credentials = await httpAuth.credentials(req, { allow: ['user'] });
      } catch (error) {
        // Attempts without a user are audited too.
        await service.auditUnauthenticated(target, error as Error, req);
        throw error;
      }
      try {
        const result = await service.requestAction(
          credentials,
          { ...target, body: req.body },
          req,
        );
        const answer: ActionResponse = { name: result.name };
        res.status(result.status).json(answer);
      } catch (error) {
        if (error instanceof PreflightConflictError) {
          sendPreflightConflict(req, res, error);
          return;
        }
        throw error;
      }
    },
  );

  if (plans) addPlanRoutes(router, plans, httpAuth);

  return router;
}

/** The maintenance plan routes (DESIGN section 7). */
function addPlanRoutes(
  router: express.Router,
  plans: PlansService,
  httpAuth: HttpAuthService,
) {
  router.get('/clusters/:cluster/plans', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    res.json(
      await plans.listPlans(credentials, req.params.cluster, { request: req }),
    );
  });

  // Before `/plans/:name`: `preflight` is not a plan.
  router.get('/clusters/:cluster/plans/preflight', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    res.json(
      await plans.planPreflight(
        credentials,
        req.params.cluster,
        parsePlanPreflightQuery(
          req.query as Record<string, unknown>,
          queryFlag,
        ),
        { request: req },
      ),
    );
  });

  router.get('/clusters/:cluster/plans/:name', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    res.json(
      await plans.getPlan(credentials, req.params.cluster, req.params.name, {
        request: req,
      }),
    );
  });

  router.post('/clusters/:cluster/plans', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    try {
      const created = await plans.createPlan(
        credentials,
        req.params.cluster,
        req.body,
        req,
      );
      res.status(201).json(created);
    } catch (error) {
      if (error instanceof PreflightConflictError) {
        sendPreflightConflict(req, res, error);
        return;
      }
      throw error;
    }
  });

  router.post('/clusters/:cluster/plans/:name/:control', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    res.json(
      await plans.controlPlan(
        credentials,
        req.params.cluster,
        req.params.name,
        req.params.control,
        req.body,
        req,
      ),
    );
  });
}
