import type { LoggerService } from '@backstage/backend-plugin-api';
import type {
  ClusterRegistry,
  ClusterState,
  NewMaintenance,
} from '../cluster/types';
import type { MaintenanceNotifications } from './watchNotifications';

const DRAINING_INTENTS = new Set(['drain', 'reboot', 'shutdown']);

/**
 * The cluster registry the routes write through, with one addition: right before this
 * replica creates a drain, reboot or shutdown, it reads the pods on the node and hands
 * them to the notifier. The operator may evict them before the watch reports the new
 * maintenance; without this the owners' notification would find the node already empty.
 * A maintenance made elsewhere (kubectl, another replica) is looked up when seen.
 */
export function withPodsAtCreation(
  clusters: ClusterRegistry,
  followers: ReadonlyMap<string, MaintenanceNotifications>,
  logger: LoggerService,
): ClusterRegistry {
  const wrap = (state: ClusterState): ClusterState => {
    const follower = followers.get(state.name);
    if (!follower) return state;
    return new Proxy(state, {
      get(target, prop, receiver) {
        if (prop === 'createMaintenance') {
          return async (obj: NewMaintenance) => {
            let remembered = false;
            if (DRAINING_INTENTS.has(obj.spec.intent)) {
              try {
                remembered = follower.rememberPods(
                  obj.metadata.name,
                  await target.podsOnNode(obj.spec.nodeName),
                );
              } catch (error) {
                logger.warn(
                  `notifications: could not read the pods on ${obj.spec.nodeName} before its ${obj.spec.intent}: ${error}`,
                );
              }
            }
            try {
              return await target.createMaintenance(obj);
            } catch (error) {
              if (remembered) follower.forgetPods(obj.metadata.name);
              throw error;
            }
          };
        }
        const value = Reflect.get(target, prop, receiver);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  };
  const wrapped = new Map(clusters.list().map(s => [s.name, wrap(s)]));
  return {
    list: () => clusters.list().map(s => wrapped.get(s.name) ?? s),
    get: name => {
      const state = clusters.get(name);
      return state ? wrapped.get(state.name) ?? state : undefined;
    },
  };
}
