/*
 * The action of a request path or query, checked before anything is asked about it:
 * the permission decorator needs it to pick the permission, the service to act.
 */
import { InputError, NotFoundError } from '@backstage/errors';
import {
  isServerAction,
  PREFLIGHT_ACTIONS,
  SERVER_ACTIONS,
  type PreflightAction,
  type ServerAction,
} from '@rackside/plugin-servers-common';

/** Whether an action carries a pre-flight. */
export function isPreflightAction(action: string): action is PreflightAction {
  return (PREFLIGHT_ACTIONS as readonly string[]).includes(action);
}

/** The action of `POST .../actions/:action`; an unknown one is a 404. */
export function serverActionOr404(action: string): ServerAction {
  if (!isServerAction(action)) {
    throw new NotFoundError(
      `unknown action ${action}; actions are ${SERVER_ACTIONS.join(', ')}`,
    );
  }
  return action;
}

/** The action of `GET .../preflight?action=`; one without a pre-flight is a 400. */
export function preflightActionOr400(action: string): PreflightAction {
  if (!isPreflightAction(action)) {
    throw new InputError(
      `action must be one of ${PREFLIGHT_ACTIONS.join(', ')}, got "${action}"`,
    );
  }
  return action;
}
