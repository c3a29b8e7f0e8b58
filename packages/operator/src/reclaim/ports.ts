/*
 * The MachineReclaim kind's ports at the edge: the reconciler's ports on the machine
 * kinds' shared caches and clients (talos/machineKinds.ts): status writes with this
 * process's own writes seen at once, the bound credential Secret (credential.ts), the
 * requester's reclaim verb asked right before the reset (a SubjectAccessReview), the
 * Talos machine API, Events. controller.ts declares the controller over them.
 */
import { machineReclaimResource } from '@rackside/plugin-servers-common';
import { parseTalosconfig } from '@rackside/plugin-servers-node';
import { conditionalStatusWriter } from '../runtime/kube/ownWrites';
import type { MachineKinds } from '../talos/machineKinds';
import { subjectAccessReviews } from '../webhook/server';
import { kubeCredentialPort } from './credential';
import type { ReclaimReconcilerPorts } from './reconciler';
import { DEFAULT_RECLAIM_LIMITS, type ReclaimLimits } from './table';

/** The limits of the MachineReclaim controller; tests shorten them. */
export type ReclaimSettings = Partial<ReclaimLimits> & {
  /** The time limit of one reconcile of a MachineReclaim (2 minutes). */
  reconcileTimeoutMs?: number;
};

export interface ReclaimControllerOptions {
  /** Probes the TalosCluster `namespace/name` again (talos-cluster/controller.ts). */
  wakeDiscovery(namespace: string, cluster: string): void;
  settings?: ReclaimSettings;
}

export function kubeReclaimPorts(
  kinds: MachineKinds,
  options: ReclaimControllerOptions,
): ReclaimReconcilerPorts {
  const { api, clusters, freshReclaims, namespace } = kinds;
  const settings = options.settings;
  const access = subjectAccessReviews(kinds.kubeConfig);
  return {
    view: { reclaim: key => freshReclaims.get(key) },
    cluster: (ns, name) => clusters.get(`${ns}/${name}`),
    // Reads and deletes only a Secret bound to its request (see credential.ts).
    credential: kubeCredentialPort(kinds.core.secrets, namespace),
    async clusterCa(cluster) {
      return parseTalosconfig(
        await kinds.readSecret(
          cluster.metadata.namespace ?? namespace,
          cluster.spec.talosconfigSecretRef,
        ),
      ).identity.ca;
    },
    nodeWithUUID: uuid =>
      kinds.nodeWithUUID(uuid.toLowerCase())?.metadata?.name,
    resetsInFlight: mr =>
      freshReclaims
        .list()
        .filter(
          r =>
            r.metadata.uid !== mr.metadata.uid &&
            r.metadata.namespace === mr.metadata.namespace &&
            (r.status?.phase === 'Resetting' ||
              r.status?.phase === 'WaitingForMaintenance'),
        )
        .map(r => ({ name: r.metadata.name, address: r.spec.address })),
    talos: kinds.talos,
    limits: { ...DEFAULT_RECLAIM_LIMITS, ...settings },
    // The reclaim verb as the requester, right before the reset (table.ts).
    mayReclaim: (username, mr) =>
      access.canReclaim(
        { username, groups: ['system:authenticated'] },
        { namespace: mr.metadata.namespace, name: mr.metadata.name },
      ),
    // spec.address is held to the target cluster's allowed networks (table.ts).
    resolve: kinds.resolve,
    reconcileTimeoutMs: settings?.reconcileTimeoutMs ?? 120_000,
    now: kinds.now,
    status: {
      write: conditionalStatusWriter(api.machineReclaims, freshReclaims),
      read: (ns, name) => api.machineReclaims.find(name, { namespace: ns }),
    },
    events: { record: kinds.record(machineReclaimResource) },
    wakeDiscovery: options.wakeDiscovery,
    log: kinds.log,
  };
}
