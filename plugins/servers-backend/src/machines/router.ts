/*
 * The machine routes under `/api/servers` (docs/architecture.md, "The backend"), HTTP in
 * and out of the machines service (MachinesService.ts): discovery addresses and
 * discovered machines, joining a machine, and "Reset and add" requests. Each action
 * request is read here once, into its typed command (commands/). Mount it before the
 * servers router, so its body parser (and not the general one) reads these requests.
 */
import type { HttpAuthService } from '@backstage/backend-plugin-api';
import type { Request, Response } from 'express';
import type express from 'express';
import { jsonBody } from '../lib/jsonBody';
import { createApiRouter } from '../schema/apiRouter';
import { parseAddDiscoveryAddress } from './commands/addDiscoveryAddress';
import { parseConfirmReclaim } from './commands/confirmReclaim';
import { parseCreateReclaim } from './commands/createReclaim';
import { parseJoinMachine } from './commands/joinMachine';
import type {
  EdgeResult,
  MachineActionResult,
  MachineCallContext,
  MachineRequest,
  MachinesService,
} from './MachinesService';

/** Options of {@link createMachinesRouter}. */
export interface MachinesRouterOptions {
  /** The machines feature (createMachinesService.ts). */
  machines: MachinesService;
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

/** What `read` answers, or the error it threw, kept for the layers to answer in turn. */
async function edgeResult<T>(
  read: () => T | Promise<T>,
): Promise<EdgeResult<T>> {
  try {
    return { ok: true, value: await read() };
  } catch (error) {
    return { ok: false, error: error as Error };
  }
}

export async function createMachinesRouter(
  options: MachinesRouterOptions,
): Promise<express.Router> {
  const { machines, httpAuth } = options;
  const router = await createApiRouter();
  router.use(MACHINE_PATHS, jsonBody({ limit: BODY_LIMIT, quiet: true }));

  /**
   * An action request as a user: the caller and the typed command read once, then the
   * service's answer with the route's status. Neither a missing user nor a body that is
   * not the command stops the request here: the service audits the attempt and answers
   * the error in its turn.
   */
  const action =
    <C, A>(
      status: number,
      parse: (path: Record<string, string>, body: unknown) => C,
      run: (
        request: MachineRequest<C>,
        call: MachineCallContext,
      ) => Promise<MachineActionResult<A>>,
    ) =>
    async (req: Request, res: Response) => {
      const request: MachineRequest<C> = {
        caller: await edgeResult(() =>
          httpAuth.credentials(req, { allow: ['user'] }),
        ),
        path: { ...req.params, cluster: req.params.cluster },
        command: await edgeResult(() => parse(req.params, req.body)),
        sent: req.body,
      };
      const result = await run(request, { request: req });
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
    action(201, parseAddDiscoveryAddress, (request, call) =>
      machines.addDiscoveryAddress(request, call),
    ),
  );
  router.post(
    '/clusters/:cluster/machines/:uuid/join',
    action(200, parseJoinMachine, (request, call) =>
      machines.joinMachine(request, call),
    ),
  );
  router.post(
    '/clusters/:cluster/reclaims',
    action(201, parseCreateReclaim, (request, call) =>
      machines.createReclaim(request, call),
    ),
  );
  router.post(
    '/clusters/:cluster/reclaims/:name/confirm',
    action(200, parseConfirmReclaim, (request, call) =>
      machines.confirmReclaim(request, call),
    ),
  );
  return router;
}
