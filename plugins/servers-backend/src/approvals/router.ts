/*
 * The approval routes under `/api/servers` (docs/approvals.md), HTTP in and out of the
 * approvals service (ApprovalsService.ts). Each is a user's only: the view issues a
 * pre-flight token to the caller and a decision is a person's (a service token, and so
 * an MCP agent calling with one, is refused by httpAuth before anything else). plugin.ts
 * mounts it before the plans router, whose `/plans/:name/:control` would otherwise
 * take `/plans/:name/approval` for an unknown control.
 */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import type { ApprovalRequestKind } from '@rackside/plugin-servers-common';
import type express from 'express';
import { refusedAudited } from '../lib/audited';
import { jsonBody } from '../lib/jsonBody';
import { PreflightConflictError } from '../preflight/preflight';
import { sendPreflightConflict } from '../preflight/preflightHttp';
import {
  sendTooManyPlanPreflights,
  TooManyPlanPreflightsError,
} from '../preflight/planPreflightLimiter';
import { createApiRouter } from '../schema/apiRouter';
import {
  parseApprovalListQuery,
  parseDecideApprovalCommand,
  type ApprovalsEdgeService,
  type ApprovalTarget,
} from './ApprovalsService';
import { ApprovalRungGrewError } from './errors';

/** Options of {@link createApprovalsRouter}. */
export interface ApprovalsRouterOptions {
  /** The approvals service and the record of a decision refused here. */
  approvals: ApprovalsEdgeService;
  httpAuth: HttpAuthService;
}

/** The paths this router reads bodies of. */
const APPROVAL_PATHS = [
  '/clusters/:cluster/maintenances/:name/approval',
  '/clusters/:cluster/plans/:name/approval',
];

export async function createApprovalsRouter(
  options: ApprovalsRouterOptions,
): Promise<express.Router> {
  const { approvals, httpAuth } = options;
  const router = await createApiRouter();
  router.use(APPROVAL_PATHS, jsonBody());

  router.get('/approvals', async (req, res) => {
    const query = parseApprovalListQuery(req.query as Record<string, unknown>);
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    res.json(await approvals.listForMe(credentials, query, { request: req }));
  });

  const view =
    (kind: ApprovalRequestKind) =>
    async (req: express.Request, res: express.Response) => {
      const credentials = await httpAuth.credentials(req, { allow: ['user'] });
      try {
        res.json(
          await approvals.getApproval(
            credentials,
            { cluster: req.params.cluster, kind, name: req.params.name },
            { request: req },
          ),
        );
      } catch (error) {
        // A plan's view computes a plan pre-flight: the per-user limit applies.
        if (error instanceof TooManyPlanPreflightsError) {
          sendTooManyPlanPreflights(req, res, error);
          return;
        }
        throw error;
      }
    };

  const decide =
    (kind: ApprovalRequestKind) =>
    async (req: express.Request, res: express.Response) => {
      const ref = { cluster: req.params.cluster, kind, name: req.params.name };
      const target: ApprovalTarget = { ...ref, body: req.body };
      // Attempts without a user, and bodies that do not parse, are audited too.
      const credentials = await refusedAudited(
        approvals,
        target,
        { actor: null, request: req },
        () => httpAuth.credentials(req, { allow: ['user'] }),
      );
      const command = await refusedAudited(
        approvals,
        target,
        { actor: credentials.principal.userEntityRef, request: req },
        () => parseDecideApprovalCommand(ref, req.body),
      );
      try {
        res.json(
          await approvals.decide(credentials, command, { request: req }),
        );
      } catch (error) {
        if (error instanceof ApprovalRungGrewError) {
          // Both rungs, so the page can say what grew: the requester asks again.
          res.status(409).json({
            error: { name: error.name, message: error.message },
            request: { method: req.method, url: req.originalUrl },
            response: { statusCode: 409 },
            requestedRung: error.requestedRung,
            rungNow: error.rungNow,
          });
          return;
        }
        if (error instanceof PreflightConflictError) {
          sendPreflightConflict(req, res, error);
          return;
        }
        if (error instanceof TooManyPlanPreflightsError) {
          sendTooManyPlanPreflights(req, res, error);
          return;
        }
        throw error;
      }
    };

  router.get(
    '/clusters/:cluster/maintenances/:name/approval',
    view('maintenance'),
  );
  router.post(
    '/clusters/:cluster/maintenances/:name/approval',
    decide('maintenance'),
  );
  router.get('/clusters/:cluster/plans/:name/approval', view('plan'));
  router.post('/clusters/:cluster/plans/:name/approval', decide('plan'));
  return router;
}
