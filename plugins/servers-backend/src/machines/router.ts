/*
 * The machine routes under `/api/servers` (docs/architecture.md, "The backend"), HTTP in
 * and out of the machines service (MachinesService.ts): discovery addresses and
 * discovered machines, joining a machine, and "Reset and add" requests. Each action
 * request is parsed here once, into its typed command (the parsers of
 * MachinesService.ts). Mount it before the servers router, so its body parser (and not
 * the general one) reads these requests.
 */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import type { Request, Response } from 'express';
import type express from 'express';
import { refusedAudited } from '../lib/audited';
import type { UserCredentials } from '../lib/credentials';
import { jsonBody } from '../lib/jsonBody';
import { createApiRouter } from '../schema/apiRouter';
import {
  parseAddDiscoveryAddressCommand,
  parseConfirmReclaimCommand,
  parseCreateReclaimCommand,
  parseJoinMachineCommand,
  type MachineAction,
  type MachineActionResult,
  type MachineCallContext,
  type MachineRequest,
  type MachinesEdgeService,
  type MachineTarget,
} from './MachinesService';

/** Options of {@link createMachinesRouter}. */
export interface MachinesRouterOptions {
  /** The machines feature, and the record of a request refused here (createMachinesService.ts). */
  machines: MachinesEdgeService;
  httpAuth: HttpAuthService;
}

/** The paths this router answers (prefixes). */
const MACHINE_PATHS = [
  '/clusters/:cluster/machines',
  '/clusters/:cluster/discovery',
  '/clusters/:cluster/reclaims',
];

/** Room for a talosconfig (64 KiB) and the rest of a body, JSON-escaped. */
const BODY_LIMIT = '256kb';

export async function createMachinesRouter(
  options: MachinesRouterOptions,
): Promise<express.Router> {
  const { machines, httpAuth } = options;
  const router = await createApiRouter();
  router.use(MACHINE_PATHS, jsonBody({ limit: BODY_LIMIT, quiet: true }));

  /**
   * An action request as a user: the caller and the typed command read once, then the
   * service's answer with the route's status. Attempts without a user, and requests
   * that do not parse, are audited too (as the service would have).
   */
  const action =
    <C, A>(
      name: MachineAction,
      status: number,
      parse: (path: Record<string, string>, body: unknown) => C,
      run: (
        credentials: UserCredentials,
        request: MachineRequest<C>,
        call: MachineCallContext,
      ) => Promise<MachineActionResult<A>>,
    ) =>
    async (req: Request, res: Response) => {
      const target: MachineTarget = {
        action: name,
        path: { ...req.params, cluster: req.params.cluster },
        sent: req.body,
      };
      const credentials = await refusedAudited(
        machines,
        target,
        { actor: null, request: req },
        () => httpAuth.credentials(req, { allow: ['user'] }),
      );
      const command = await refusedAudited(
        machines,
        target,
        { actor: credentials.principal.userEntityRef, request: req },
        () => parse(req.params, req.body),
      );
      const result = await run(
        credentials,
        { target, command },
        { request: req },
      );
      res.status(status).json(result.answer);
    };

  router.get('/clusters/:cluster/machines', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    res.json(
      await machines.machines(credentials, req.params.cluster, {
        request: req,
      }),
    );
  });
  // Before `/reclaims/:name`, or "can" would be taken for a request's name.
  router.get('/clusters/:cluster/reclaims/can', async (req, res) => {
    const credentials = await httpAuth.credentials(req, { allow: ['user'] });
    res.json(
      await machines.canReclaim(credentials, req.params.cluster, {
        request: req,
      }),
    );
  });
  router.get('/clusters/:cluster/reclaims', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    res.json(
      await machines.reclaims(credentials, req.params.cluster, {
        request: req,
      }),
    );
  });
  router.get('/clusters/:cluster/reclaims/:name', async (req, res) => {
    const credentials = await httpAuth.credentials(req);
    res.json(
      await machines.reclaim(credentials, req.params.cluster, req.params.name, {
        request: req,
      }),
    );
  });
  router.post(
    '/clusters/:cluster/discovery/addresses',
    action(
      'addDiscoveryAddress',
      201,
      parseAddDiscoveryAddressCommand,
      (credentials, request, call) =>
        machines.addDiscoveryAddress(credentials, request, call),
    ),
  );
  router.post(
    '/clusters/:cluster/machines/:uuid/join',
    action(
      'joinMachine',
      200,
      parseJoinMachineCommand,
      (credentials, request, call) =>
        machines.joinMachine(credentials, request, call),
    ),
  );
  router.post(
    '/clusters/:cluster/reclaims',
    action(
      'createReclaim',
      201,
      parseCreateReclaimCommand,
      (credentials, request, call) =>
        machines.createReclaim(credentials, request, call),
    ),
  );
  router.post(
    '/clusters/:cluster/reclaims/:name/confirm',
    action(
      'confirmReclaim',
      200,
      parseConfirmReclaimCommand,
      (credentials, request, call) =>
        machines.confirmReclaim(credentials, request, call),
    ),
  );
  return router;
}
