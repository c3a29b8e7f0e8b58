import type {
  MachineReclaim,
  MachineReclaimInput,
  TalosCluster,
  TalosMachine,
} from '@rackside/plugin-servers-common';

/** Whether the backend's own Kubernetes identity may create and confirm reclaims. */
export interface KubernetesReclaimAccess {
  allowed: boolean;
  /** Why not, for a person. */
  reason?: string;
}

/**
 * The Secret that carries a reclaim's foreign talosconfig. Created once, never read
 * back by the backend (its identity may only create Secrets, in the operator namespace).
 */
export interface CredentialSecret {
  name: string;
  /** The MachineReclaim that owns it (garbage-collected with it). */
  owner: { name: string; uid: string };
  /** Data key (the MachineReclaim's `credentialSecretRef.key`). */
  key: string;
  talosconfig: string;
}

/**
 * The machine side of one cluster (TalosClusters, TalosMachines, MachineReclaims in
 * the operator namespace), as the machine routes see it. Lists come from watch caches;
 * `fresh*` reads go to the apiserver for read-modify-write; writes are conditional on
 * the resourceVersion they were read at (ConflictError when it moved). Errors are
 * `@backstage/errors` errors. Kept apart from ClusterState so each stays small.
 */
export interface MachinesState {
  /** The Backstage cluster name (`servers.clusters[].name`). */
  readonly cluster: string;
  /** The operator namespace, where all of these objects live. */
  readonly namespace: string;
  talosClusters(): Promise<TalosCluster[]>;
  talosMachines(): Promise<TalosMachine[]>;
  reclaims(): Promise<MachineReclaim[]>;

  freshTalosCluster(name: string): Promise<TalosCluster>;
  /** Every reclaim, listed now (not from the cache): address clean-up must not miss one. */
  freshReclaims(): Promise<MachineReclaim[]>;
  freshTalosMachines(): Promise<TalosMachine[]>;
  freshTalosMachine(name: string): Promise<TalosMachine>;
  freshReclaim(name: string): Promise<MachineReclaim>;

  updateTalosCluster(obj: TalosCluster): Promise<TalosCluster>;
  updateTalosMachine(obj: TalosMachine): Promise<TalosMachine>;
  createReclaim(obj: MachineReclaimInput): Promise<MachineReclaim>;
  updateReclaim(obj: MachineReclaim): Promise<MachineReclaim>;
  /** Creates the credential Secret; answers nothing, so the credential is not passed around. */
  createCredentialSecret(secret: CredentialSecret): Promise<void>;

  /** SubjectAccessReview of the backend's own identity for the `reclaim` verb. */
  kubernetesReclaimAccess(): Promise<KubernetesReclaimAccess>;
  /** Calls `listener` when anything cached changed; returns unsubscribe. */
  onChange(listener: () => void): () => void;
}

/** The machine side of every configured cluster. */
export interface MachinesRegistry {
  list(): MachinesState[];
  get(cluster: string): MachinesState | undefined;
}
