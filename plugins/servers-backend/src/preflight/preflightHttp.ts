/*
 * The HTTP side of pre-flights, shared by the servers routes and the plan routes: the
 * drain flags of a pre-flight query, and the 409 that carries the new pre-flight.
 */
import { InputError } from '@backstage/errors';
import type express from 'express';
import type { PreflightConflictError } from './preflight';

/** A 409 whose new pre-flight travels with it, so the dialog can show it at once. */
export function sendPreflightConflict(
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
export function queryFlag(value: unknown, name: string): boolean {
  if (value === undefined || value === 'false') return false;
  if (value === 'true') return true;
  throw new InputError(`${name} must be true or false`);
}
