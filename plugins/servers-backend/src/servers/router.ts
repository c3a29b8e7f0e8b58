import type { HttpAuthService } from '@backstage/backend-plugin-api';
import type { ActionResponse } from '@rackside/plugin-servers-common';
import type express from 'express';
import { refusedAudited } from '../lib/audited';
import { jsonBody } from '../lib/jsonBody';
import { PreflightConflictError } from '../preflight/preflight';
import { sendPreflightConflict } from '../preflight/preflightHttp';
import { createApiRouter } from '../schema/apiRouter';
import { HealthRefreshTooSoonError } from './commands/requestHealthRefresh';
import { parseServerListQuery } from './serverList';
import {
  parseActionCommand,
  parsePreflightQuery,
  type ActionTarget,
  type ServersEdgeService,
} from './ServersService';

export { QuorumRefusedError } from './commands/requestAction';

/** Options of {@link createRouter}. */
export interface RouterOptions {
  /** The servers service and the record of a request refused here (createServersService). */
  service: ServersEdgeService;
  httpAuth: HttpAuthService;
}

/**
 * Builds the servers routes under `/api/servers`: HTTP in and out of the servers service
 * (createServersService.ts: the audit, the permission checks, every other check); the
 * actions registry calls the same service. Each request is parsed here, once, into the
 * service's typed command or query. plugin.ts mounts it beside the other features' routers.
 */
export async function createRouter(
  options: RouterOptions,
): Promise<express.Router> {
  const { service, httpAuth } = options;
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

  router.get('/upgrades/sources', async (req, res) => {
    res.json(
      await service.getUpgradeSources(await httpAuth.credentials(req), {
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
        parsePreflightQuery(
          req.params.cluster,
          req.params.node,
          req.query as Record<string, unknown>,
        ),
        { request: req },
      ),
    );
  });

  router.post(
    '/clusters/:cluster/servers/:node/actions/:action',
    async (req, res) => {
      const body = req.body as { reason?: unknown } | undefined;
      const target: ActionTarget = {
        cluster: req.params.cluster,
        node: req.params.node,
        action: req.params.action,
        ...(typeof body?.reason === 'string' ? { reason: body.reason } : {}),
      };
      // Attempts without a user, and requests that do not parse, are audited too.
      const credentials = await refusedAudited(
        service,
        target,
        { actor: null, request: req },
        () => httpAuth.credentials(req, { allow: ['user'] }),
      );
      const command = await refusedAudited(
        service,
        target,
        { actor: credentials.principal.userEntityRef, request: req },
        () => parseActionCommand(target, req.body),
      );
      try {
        const result = await service.requestAction(credentials, command, {
          request: req,
        });
        const answer: ActionResponse = {
          name: result.name,
          ...(result.approval ? { approval: result.approval } : {}),
        };
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

  return router;
}
