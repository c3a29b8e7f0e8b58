import { ConflictError } from '@backstage/errors';
import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  nodeMaintenanceResource,
  type MachineReclaim,
} from '@rackside/plugin-servers-common';
import {
  makeKubeConfig,
  ResourceClient,
  type ClusterConfig,
} from '@rackside/plugin-servers-node';
import type { MachinesState } from '../cluster/machinesTypes';

/**
 * The annotations by which backend replicas claim a notification on the object it is
 * about (a NodeMaintenance or a MachineReclaim): the replica whose write of the
 * annotation succeeds sends it, the others see the annotation and do not.
 */
export const NOTIFIED_ANNOTATIONS = {
  /** The requester told of the end; the value is the phase it ended in. */
  outcome: 'rackside.dev/notified-outcome',
  /** The owners of the evicted workloads told of the drain; the value is when. */
  owners: 'rackside.dev/notified-owners',
  /** How many times the requester was told the drain is blocked. */
  blocked: 'rackside.dev/notified-blocked',
} as const;

/** A notification that is claimed before it is sent. */
export type ClaimedEvent = keyof typeof NOTIFIED_ANNOTATIONS;

/** An object as a claim reads and writes it: only its metadata matters here. */
export interface ClaimableObject {
  metadata: {
    name: string;
    uid?: string;
    resourceVersion?: string;
    annotations?: Record<string, string>;
  };
}

/**
 * The objects of one kind as the apiserver has them now: `get` reads one afresh (not
 * from a watch cache), `update` writes it on the resourceVersion it was read at and
 * throws a `ConflictError` when that moved (another writer came first).
 */
export interface ClaimStore {
  get(name: string): Promise<ClaimableObject>;
  update(obj: ClaimableObject): Promise<unknown>;
}

/** One claim: of which notification, on which object, from what this replica saw. */
export interface Claim {
  name: string;
  /** The object's uid when the event was seen: a new object of the same name is not it. */
  uid?: string;
  event: ClaimedEvent;
  /**
   * The annotation's value this replica saw before the event (absent: no annotation).
   * The claim is won only from that value: any other means another replica told it.
   */
  from?: string;
  /** The value written when won. */
  to: string;
}

/** `won`: send; `lost`: another replica sends; `unclaimed`: could not tell, send anyway. */
export type ClaimResult = 'won' | 'lost' | 'unclaimed';

const ATTEMPTS = 5;

/**
 * Claims a notification on its object: reads the object afresh and writes the event's
 * annotation on the resourceVersion it read, so of replicas that read the same version
 * only one write succeeds; a loser's next read shows the annotation. A conflict with
 * any other write (the operator's status) is read again. Where the claim cannot be
 * decided (the object is gone or replaced, the write is refused, conflicts persist)
 * the answer is `unclaimed`, and the caller sends anyway: a notification told twice
 * is better than one not told.
 */
export async function claimNotification(
  store: ClaimStore,
  claim: Claim,
  logger: LoggerService,
): Promise<ClaimResult> {
  const key = NOTIFIED_ANNOTATIONS[claim.event];
  const what = `${claim.event} notification of ${claim.name}`;
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    let current: ClaimableObject;
    try {
      current = await store.get(claim.name);
    } catch (error) {
      logger.warn(
        `notifications: could not read ${claim.name} to claim its ${claim.event} notification, sending it unclaimed: ${error}`,
      );
      return 'unclaimed';
    }
    if (
      claim.uid &&
      current.metadata.uid &&
      current.metadata.uid !== claim.uid
    ) {
      logger.warn(
        `notifications: ${claim.name} was replaced (uid ${current.metadata.uid}, not ${claim.uid}); sending its ${claim.event} notification unclaimed`,
      );
      return 'unclaimed';
    }
    const annotations = current.metadata.annotations ?? {};
    if (annotations[key] !== claim.from) {
      logger.debug(
        `notifications: the ${what} was claimed by another replica (${key}: ${annotations[key]})`,
      );
      return 'lost';
    }
    try {
      await store.update({
        ...current,
        metadata: {
          ...current.metadata,
          annotations: { ...annotations, [key]: claim.to },
        },
      });
      return 'won';
    } catch (error) {
      if (!ConflictError.is(error)) {
        logger.warn(
          `notifications: could not claim the ${what} (${key}), sending it unclaimed: ${error}`,
        );
        return 'unclaimed';
      }
      // Someone wrote first: another replica's claim, or any other change. Read again.
    }
  }
  logger.warn(
    `notifications: ${ATTEMPTS} writes of ${key} on ${claim.name} met a newer version; sending the ${what} unclaimed`,
  );
  return 'unclaimed';
}

/**
 * The NodeMaintenances of each configured cluster, read and updated on the apiserver
 * with the backend's own identity (it may get and update them; see
 * charts/rackside/rbac/backstage-cluster.yaml).
 */
export function kubeMaintenanceClaims(
  clusters: ClusterConfig[],
): (cluster: string) => ClaimStore | undefined {
  const stores = new Map<string, ClaimStore>();
  return name => {
    let store = stores.get(name);
    const config = clusters.find(c => c.name === name);
    if (!store && config) {
      const client = new ResourceClient<any>(
        makeKubeConfig(config),
        nodeMaintenanceResource,
        { fieldManager: 'rackside-backstage' },
      );
      store = {
        get: n => client.get(n),
        update: obj => client.update(obj),
      };
      stores.set(name, store);
    }
    return store;
  };
}

/** A cluster's MachineReclaims, read afresh and updated through its machines state. */
export function reclaimClaims(machines: MachinesState): ClaimStore {
  return {
    get: name => machines.freshReclaim(name),
    // What `get` answered, with the claim's annotation added: a MachineReclaim.
    update: obj => machines.updateReclaim(obj as MachineReclaim),
  };
}
