/*
 * The machine routes under `/api/servers` (docs/architecture.md, "The backend"), HTTP in and out of
 * AuthorizedMachinesService: discovery addresses and discovered machines, joining a
 * machine, and "Reset and add" requests. Every call is an auditor event (reads
 * `machine-read`; each action its own). Mount it before the servers router, so its
 * body parser (and not the general one) reads these requests.
 */
import type {
  AuditorService,
  HttpAuthService,
  LoggerService,
  PermissionsService,
} from '@backstage/backend-plugin-api';
import type { Request, Response } from 'express';
import type express from 'express';
import {
  audited,
  auditUnauthenticated,
  type AuditedOptions,
} from '../lib/audited';
import { jsonBody } from '../lib/jsonBody';
import { createApiRouter } from '../schema/apiRouter';
import { READ_SEVERITY, RECLAIM_SEVERITY } from '../lib/auditSeverity';
import type { ReasonPolicy } from '../lib/reasonPolicy';
import type { MachinesRegistry } from '../cluster/machinesTypes';
import { AuthorizedMachinesService } from './AuthorizedMachinesService';
import { rawString } from './context';
import { MachinesService, type MachineAction } from './MachinesService';

/** Options of {@link createMachinesRouter}. */
export interface MachinesRouterOptions {
  machines: MachinesRegistry;
  httpAuth: HttpAuthService;
  permissions: PermissionsService;
  auditor: AuditorService;
  logger: LoggerService;
  reasonPolicy: ReasonPolicy;
}

/** The paths this router answers (prefixes). */
const MACHINE_PATHS = [
  '/clusters/:cluster/machines',
  '/clusters/:cluster/discovery',
  '/clusters/:cluster/reclaims',
];

/** Room for a talosconfig (64 KiB) and the rest of a body, JSON-escaped. */
const BODY_LIMIT = '256kb';

/** How an action is recorded: what is known from the request before any check. */
type ActionAudit = (
  req: Request,
) => Pick<AuditedOptions, 'eventId' | 'severityLevel' | 'meta'>;

/** The audit record of each action. */
const ACTION_AUDITS: Record<MachineAction, ActionAudit> = {
  addDiscoveryAddress: req => ({
    eventId: 'machine-discovery-address-add',
    severityLevel: 'medium',
    meta: {
      cluster: req.params.cluster,
      address: rawString(req.body, 'address', 261),
      reason: rawString(req.body, 'reason'),
    },
  }),
  joinMachine: req => ({
    eventId: 'machine-join',
    severityLevel: 'medium',
    meta: {
      cluster: req.params.cluster,
      machine: req.params.uuid.toLowerCase(),
      reason: rawString(req.body, 'reason'),
    },
  }),
  createReclaim: req => ({
    eventId: 'machine-reclaim-create',
    severityLevel: RECLAIM_SEVERITY,
    meta: {
      cluster: req.params.cluster,
      address: rawString(req.body, 'address', 261),
      reason: rawString(req.body, 'reason'),
      ttlMinutes:
        typeof req.body?.ttlMinutes === 'number' ? req.body.ttlMinutes : null,
    },
  }),
  confirmReclaim: req => ({
    eventId: 'machine-reclaim-confirm',
    severityLevel: RECLAIM_SEVERITY,
    meta: {
      cluster: req.params.cluster,
      reclaim: req.params.name,
      typedUUID: rawString(req.body, 'uuid', 64),
    },
  }),
};

export async function createMachinesRouter(
  options: MachinesRouterOptions,
): Promise<express.Router> {
  const { httpAuth, auditor } = options;
  const service = new AuthorizedMachinesService(
    new MachinesService(options),
    options.permissions,
  );
  const router = await createApiRouter();
  router.use(MACHINE_PATHS, jsonBody({ limit: BODY_LIMIT, quiet: true }));

  /**
   * A read with its auditor event (`machine-read`, severity low): who read what of
   * which cluster, and how it ended. The caller is authenticated first (401 as before;
   * the auditor names the actor from the request).
   */
  const read =
    (what: string, answer: (req: Request) => Promise<unknown>) =>
    async (req: Request, res: Response) => {
      const credentials = await httpAuth.credentials(req);
      const principal = credentials.principal as {
        userEntityRef?: string;
        subject?: string;
      };
      const meta = {
        actor: principal.userEntityRef ?? principal.subject ?? null,
        read: what,
        cluster: req.params.cluster,
        ...(req.params.name ? { reclaim: req.params.name } : {}),
        via: 'http',
      };
      await audited(
        {
          auditor,
          eventId: 'machine-read',
          severityLevel: READ_SEVERITY,
          request: req,
          meta,
        },
        async () => {
          res.json(await answer(req));
        },
      );
    };

  /**
   * An action as a user, every attempt recorded (also one without a user), with what
   * the action learns on the way (e.g. the reclaim's name).
   */
  const action =
    (name: MachineAction) => async (req: Request, res: Response) => {
      const audit = { auditor, request: req, ...ACTION_AUDITS[name](req) };
      let credentials;
      try {
        credentials = await httpAuth.credentials(req, { allow: ['user'] });
      } catch (error) {
        await auditUnauthenticated(audit, error as Error);
        throw error;
      }
      const user = credentials;
      const result = await audited(
        {
          ...audit,
          meta: { actor: user.principal.userEntityRef, ...audit.meta },
        },
        async record => {
          const answer = await service.run(name, req.params.cluster, {
            credentials: user,
            params: req.params,
            body: req.body,
            extra: record.extra,
          });
          record.outcome = answer.outcome;
          return answer;
        },
      );
      res.status(result.status).json(result.body);
    };

  router.get(
    '/clusters/:cluster/machines',
    read('machines', async req =>
      service.machines(await httpAuth.credentials(req), req.params.cluster),
    ),
  );
  // Before `/reclaims/:name`, or "can" would be taken for a request's name.
  router.get(
    '/clusters/:cluster/reclaims/can',
    read('can-reclaim', async req =>
      service.canReclaim(
        await httpAuth.credentials(req, { allow: ['user'] }),
        req.params.cluster,
      ),
    ),
  );
  router.get(
    '/clusters/:cluster/reclaims',
    read('reclaims', async req =>
      service.reclaims(await httpAuth.credentials(req), req.params.cluster),
    ),
  );
  router.get(
    '/clusters/:cluster/reclaims/:name',
    read('reclaim', async req =>
      service.reclaim(
        await httpAuth.credentials(req),
        req.params.cluster,
        req.params.name,
      ),
    ),
  );
  router.post(
    '/clusters/:cluster/discovery/addresses',
    action('addDiscoveryAddress'),
  );
  router.post('/clusters/:cluster/machines/:uuid/join', action('joinMachine'));
  router.post('/clusters/:cluster/reclaims', action('createReclaim'));
  router.post(
    '/clusters/:cluster/reclaims/:name/confirm',
    action('confirmReclaim'),
  );
  return router;
}
