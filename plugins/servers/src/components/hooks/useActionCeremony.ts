import {
  PREFLIGHT_ACTIONS,
  type ActionOffer,
  type PreflightAction,
  type ServerAction,
} from '@rackside/plugin-servers-common';
import { usePreflight } from './usePreflight';

function isPreflightAction(action: ServerAction): action is PreflightAction {
  return (PREFLIGHT_ACTIONS as readonly ServerAction[]).includes(action);
}

/**
 * What the ceremony of one action on one server asks now: the offer's ceremony, or the
 * pre-flight's once there is one (it is the newer word on what the request must carry),
 * and whether the pre-flight, if it needs one, is taken, allows it and is acknowledged.
 */
export function useActionCeremony(
  cluster: string,
  node: string,
  action: ServerAction,
  offer: ActionOffer,
) {
  // A refused action with a pre-flight still takes it: it carries the guard's
  // sentence and numbers as they are now (and says so if the refusal is over).
  const preflightAction =
    isPreflightAction(action) &&
    (offer.ceremony.requires.preflightAck || offer.ceremony.level === 'refused')
      ? action
      : undefined;
  const needsPreflight = preflightAction !== undefined;
  const pre = usePreflight(cluster, node, preflightAction);
  const ceremony = pre.preflight?.ceremony ?? offer.ceremony;
  const preflightReady =
    !needsPreflight ||
    (!pre.loading &&
      !!pre.preflight &&
      pre.preflight.canProceed &&
      pre.acknowledged);
  return {
    pre,
    needsPreflight,
    preflightReady,
    ceremony,
    hazard: ceremony.level === 'hazard',
    refused: ceremony.level === 'refused',
    needsTypedName: ceremony.requires.typedName,
    typedReason: ceremony.requires.typedReason,
  };
}
