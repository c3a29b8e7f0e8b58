import type {
  BackstageCredentials,
  BackstageUserPrincipal,
  HttpAuthService,
} from '@backstage/backend-plugin-api';
import type { ActionResponse } from '@rackside/plugin-servers-common';
import type express from 'express';
import { jsonBody } from '../lib/jsonBody';
import type { PlansService } from '../plans/PlansService';
import { createPlansRouter } from '../plans/router';
import { createApiRouter } from '../schema/apiRouter';
import { HealthRefreshTooSoonError } from './commands/requestHealthRefresh';
import { PreflightConflictError } from '../preflight/preflight';
import { parseServerListQuery } from './serverList';
import type { AuditedServersService } from './AuditedServersService';
import { queryFlag, sendPreflightConflict } from '../preflight/preflightHttp';

export { QuorumRefusedError } from './commands/requestAction';

/** Options of {@link createRouter}. */
export interface RouterOptions {
  service: AuditedServersService;
  /** The maintenance plan routes (docs/plans.md); absent: not served. */
  plans?: PlansService;
  httpAuth: HttpAuthService;
}

/**
 * Builds the `/api/servers` routes: HTTP in and out of the servers service
 * (createServersService.ts: the audit, the permission checks, every other check); the
 * actions registry calls the same service. With `plans`, the plan routes (plans/router.ts) too.
 */
export async function createRouter(
  options: RouterOptions,
): Promise<express.Router> {
  const { service, plans, httpAuth } = options;
  const router = await createApiRouter();
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

  // `res` untyped: the answer is sent as the text the list cache keeps (below).
  router.get(
    '/clusters/:cluster/servers',
    async (req, res: express.Response) => {
      const credentials = await httpAuth.credentials(req);
      // No window parameters: the whole list, as always (a contract). With `limit`,
      // `continue`, `filter`, `sort` or `direction`: one window of it (serverList.ts).
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
    },
  );

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

  router.get('/clusters/:cluster/servers/:node/alerts', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    res.json(
      await service.getServerAlerts(
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
          { request: req },
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

  router.post(
    '/clusters/:cluster/servers/:node/health/refresh',
    async (req, res) => {
      const credentials = await httpAuth.credentials(req, { allow: ['user'] });
      try {
        res
          .status(202)
          .json(
            await service.requestHealthRefresh(
              credentials,
              req.params.cluster,
              req.params.node,
              { request: req },
            ),
          );
      } catch (error) {
        if (error instanceof HealthRefreshTooSoonError) {
          res.set('Retry-After', String(error.retryAfterSeconds));
        }
        throw error;
      }
    },
  );

  // After the servers routes and behind their body parser, as they always were.
  if (plans) router.use(await createPlansRouter({ plans, httpAuth }));

  return router;
}
