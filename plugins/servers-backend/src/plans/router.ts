/*
 * The maintenance plan routes under `/api/servers` (docs/architecture.md, "The backend";
 * docs/plans.md), HTTP in and out of the plans service (PlansService.ts). plugin.ts
 * mounts them after the servers routes.
 */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import type express from 'express';
import { refusedAudited } from '../lib/audited';
import type { UserCredentials } from '../lib/credentials';
import { jsonBody } from '../lib/jsonBody';
import { createApiRouter } from '../schema/apiRouter';
import { PreflightConflictError } from '../preflight/preflight';
import { queryFlag, sendPreflightConflict } from '../preflight/preflightHttp';
import {
  sendTooManyPlanPreflights,
  TooManyPlanPreflightsError,
} from '../preflight/planPreflightLimiter';
import { parsePlanPreflightQuery } from './planPreflight';
import {
  parseControlPlanCommand,
  parseCreatePlanCommand,
  parseRenewPlanCommand,
  type PlanRequestTarget,
  type PlansEdgeService,
} from './PlansService';
import { parsePlanListQuery } from './planView';

/** Options of {@link createPlansRouter}. */
export interface PlansRouterOptions {
  /** The plans service and the record of a request refused here (createPlansService). */
  plans: PlansEdgeService;
  httpAuth: HttpAuthService;
}

/** Builds the plan routes; each request is parsed here, once, into the service's command. */
export async function createPlansRouter(
  options: PlansRouterOptions,
): Promise<express.Router> {
  const { plans, httpAuth } = options;
  const router = await createApiRouter();
  router.use(jsonBody());

  router.get('/clusters/:cluster/plans', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    res.json(
      await plans.listPlans(
        credentials,
        req.params.cluster,
        parsePlanListQuery(req.query as Record<string, unknown>),
        { request: req },
      ),
    );
  });

  // Before `/plans/:name`: `preflight` is not a plan.
  router.get('/clusters/:cluster/plans/preflight', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    try {
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
    } catch (error) {
      if (error instanceof TooManyPlanPreflightsError) {
        sendTooManyPlanPreflights(req, res, error);
        return;
      }
      throw error;
    }
  });

  router.get('/clusters/:cluster/plans/:name', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    res.json(
      await plans.getPlan(credentials, req.params.cluster, req.params.name, {
        request: req,
      }),
    );
  });

  /** Parses a plan request once; one that does not parse is audited, then answered. */
  const parsed = <C>(
    req: express.Request,
    credentials: UserCredentials,
    target: PlanRequestTarget,
    parse: () => C,
  ) =>
    refusedAudited(
      plans,
      target,
      { actor: credentials.principal.userEntityRef, request: req },
      parse,
    );

  router.post('/clusters/:cluster/plans', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    const { cluster } = req.params;
    const command = await parsed(
      req,
      credentials,
      { cluster, action: 'create', body: req.body },
      () => parseCreatePlanCommand(cluster, req.body),
    );
    try {
      const created = await plans.createPlan(credentials, command, {
        request: req,
      });
      res.status(201).json(created);
    } catch (error) {
      if (!sentPreflightRefusal(req, res, error)) throw error;
    }
  });

  // Before `/plans/:name/:control`: renew is not a pause, resume or cancel.
  router.post('/clusters/:cluster/plans/:name/renew', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    const { cluster, name } = req.params;
    const command = await parsed(
      req,
      credentials,
      { cluster, action: 'renew', plan: name, body: req.body },
      () => parseRenewPlanCommand(cluster, name, req.body),
    );
    try {
      res.json(await plans.renewPlan(credentials, command, { request: req }));
    } catch (error) {
      // A renewal acknowledges a plan pre-flight as a creation does: the same answers.
      if (!sentPreflightRefusal(req, res, error)) throw error;
    }
  });

  router.post('/clusters/:cluster/plans/:name/:control', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    const { cluster, name, control } = req.params;
    const command = await parsed(
      req,
      credentials,
      { cluster, action: control, plan: name, body: req.body },
      () => parseControlPlanCommand(cluster, name, control, req.body),
    );
    res.json(await plans.controlPlan(credentials, command, { request: req }));
  });

  return router;
}

/**
 * Answers a refused acknowledgement of a plan pre-flight (a creation's or a renewal's): 409
 * with the new pre-flight, or 429 with Retry-After. False when the error is neither.
 */
function sentPreflightRefusal(
  req: express.Request,
  res: express.Response,
  error: unknown,
): boolean {
  if (error instanceof PreflightConflictError) {
    sendPreflightConflict(req, res, error);
    return true;
  }
  if (error instanceof TooManyPlanPreflightsError) {
    sendTooManyPlanPreflights(req, res, error);
    return true;
  }
  return false;
}
