/*
 * The router every route file of the plugin starts from: generated from
 * src/schema/openapi.yaml (createOpenApiRouter, @backstage/backend-openapi-utils), so
 * a route the document does not describe does not type-check, and the document is
 * served at `/openapi.json`.
 */
import type { RequestHandler } from 'express';
import { createOpenApiRouter } from './openapi';

/** The document's router type: paths, params, bodies and answers as the spec says. */
export type ApiRouter = Awaited<ReturnType<typeof createOpenApiRouter>>;

/** In place of the default `express.json()`: each route file reads its own bodies. */
const noBodyParser: RequestHandler = (_req, _res, next) => next();

/**
 * A router of the plugin's routes. The OpenAPI validator does not check requests:
 * bodies are parsed by the zod schemas of servers-common and queries by the services
 * (one parser per input, whose 400 messages the clients and tests read; the validator
 * would answer first, in its own words). src/schema/openapi.test.ts keeps the spec and
 * those schemas in step. Body parsers come after it (jsonBody, with its limits and
 * quiet answers), so their errors keep their status instead of the validator's 400.
 */
export function createApiRouter(): Promise<ApiRouter> {
  return createOpenApiRouter({
    validatorOptions: { validateRequests: false },
    middleware: [noBodyParser],
  });
}
