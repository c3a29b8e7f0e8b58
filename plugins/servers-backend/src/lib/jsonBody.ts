import { InputError } from '@backstage/errors';
import express from 'express';

/** Options of {@link jsonBody}. */
export interface JsonBodyOptions {
  /** The largest body read (express's default, 100kb, if unset). */
  limit?: string;
  /**
   * Answer a body that cannot be read with our own 400 instead of the parser's error:
   * V8's JSON.parse message quotes the text around the fault, and a body may carry a
   * private key.
   */
  quiet?: boolean;
}

/** The one JSON body parser of the plugin's routes. */
export function jsonBody(
  options: JsonBodyOptions = {},
): express.RequestHandler {
  const parse = express.json(
    options.limit ? { limit: options.limit } : undefined,
  );
  if (!options.quiet) return parse;
  return (req, res, next) =>
    parse(req, res, (error?: any) => {
      if (!error) {
        next();
      } else if (error.type === 'entity.too.large') {
        next(new InputError(`request body is larger than ${options.limit}`));
      } else {
        next(new InputError('request body is not valid JSON'));
      }
    });
}
