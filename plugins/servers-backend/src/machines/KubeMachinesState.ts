import type { LoggerService } from '@backstage/backend-plugin-api';
import {
  CREDENTIAL_OF_LABEL,
  machineReclaimResource,
  MACHINE_RECLAIM_VERB,
  RACKSIDE_API_VERSION,
  RACKSIDE_GROUP,
  talosClusterResource,
  talosMachineResource,
  type MachineReclaim,
  type MachineReclaimInput,
  type TalosCluster,
  type TalosMachine,
} from '@rackside/plugin-servers-common';
import {
  CoreClient,
  createWatchCache,
  KubeHttp,
  makeKubeConfig,
  RacksideClient,
  resourcePath,
  toBackstageError,
  type ClusterConfig,
  type WatchCache,
} from '@rackside/plugin-servers-node';
import type {
  CredentialSecret,
  KubernetesReclaimAccess,
  MachinesState,
} from '../cluster/machinesTypes';
import { waitForFirstSync } from '../cluster/cacheSync';

/** How long the answer of the access review is reused (bindings change rarely). */
const ACCESS_REVIEW_TTL_MS = 60_000;
const FIELD_MANAGER = 'rackside-backstage';

/** The verbs on `machinereclaims` a Reset and add needs from the backend's identity. */
const RECLAIM_VERBS = ['create', 'update', MACHINE_RECLAIM_VERB] as const;

/** What a machine read answers while its cache is still empty: the CRDs may be missing. */
function synced(cache: WatchCache<any>, items: string, cluster: string) {
  return waitForFirstSync(cache, {
    cluster,
    items,
    hint: 'are the Rackside CRDs installed?',
  });
}

/**
 * The machine side of one cluster: watch caches of TalosClusters, TalosMachines and
 * MachineReclaims in the operator namespace, writes through the typed clients. It
 * never reads or lists Secrets: the backend's identity may only create them.
 */
export class KubeMachinesState implements MachinesState {
  readonly cluster: string;
  readonly namespace: string;
  private readonly clusterCache: WatchCache<TalosCluster>;
  private readonly machineCache: WatchCache<TalosMachine>;
  private readonly reclaimCache: WatchCache<MachineReclaim>;
  private readonly client: RacksideClient;
  private readonly core: CoreClient;
  private readonly http: KubeHttp;
  private access?: { at: number; answer: Promise<KubernetesReclaimAccess> };

  constructor(cluster: ClusterConfig, logger: LoggerService) {
    this.cluster = cluster.name;
    this.namespace = cluster.operatorNamespace;
    const kubeConfig = makeKubeConfig(cluster);
    this.http = new KubeHttp(kubeConfig);
    const log = logger.child({ cluster: cluster.name });
    const ns = this.namespace;
    this.clusterCache = createWatchCache<TalosCluster>({
      kubeConfig: this.http,
      path: resourcePath(talosClusterResource, ns),
      name: `${cluster.name} talosclusters`,
      logger: log,
    });
    this.machineCache = createWatchCache<TalosMachine>({
      kubeConfig: this.http,
      path: resourcePath(talosMachineResource, ns),
      name: `${cluster.name} talosmachines`,
      logger: log,
    });
    this.reclaimCache = createWatchCache<MachineReclaim>({
      kubeConfig: this.http,
      path: resourcePath(machineReclaimResource, ns),
      name: `${cluster.name} machinereclaims`,
      logger: log,
    });
    this.client = new RacksideClient(this.http, {
      fieldManager: FIELD_MANAGER,
    });
    this.core = new CoreClient(this.http, { fieldManager: FIELD_MANAGER });
  }

  async talosClusters(): Promise<TalosCluster[]> {
    await synced(this.clusterCache, 'TalosClusters', this.cluster);
    return this.clusterCache.list();
  }

  async talosMachines(): Promise<TalosMachine[]> {
    await synced(this.machineCache, 'TalosMachines', this.cluster);
    return this.machineCache.list();
  }

  async reclaims(): Promise<MachineReclaim[]> {
    await synced(this.reclaimCache, 'MachineReclaims', this.cluster);
    return this.reclaimCache.list();
  }

  private get scope() {
    return { namespace: this.namespace };
  }

  freshTalosCluster(name: string): Promise<TalosCluster> {
    return this.client.talosClusters.get(name, this.scope);
  }

  async freshReclaims(): Promise<MachineReclaim[]> {
    return (await this.client.machineReclaims.list(this.scope)).items;
  }

  async freshTalosMachines(): Promise<TalosMachine[]> {
    return (await this.client.talosMachines.list(this.scope)).items;
  }

  freshTalosMachine(name: string): Promise<TalosMachine> {
    return this.client.talosMachines.get(name, this.scope);
  }

  freshReclaim(name: string): Promise<MachineReclaim> {
    return this.client.machineReclaims.get(name, this.scope);
  }

  updateTalosCluster(obj: TalosCluster): Promise<TalosCluster> {
    return this.client.talosClusters.update(obj, this.scope);
  }

  updateTalosMachine(obj: TalosMachine): Promise<TalosMachine> {
    return this.client.talosMachines.update(obj, this.scope);
  }

  createReclaim(obj: MachineReclaimInput): Promise<MachineReclaim> {
    return this.client.machineReclaims.create(obj, this.scope);
  }

  updateReclaim(obj: MachineReclaim): Promise<MachineReclaim> {
    return this.client.machineReclaims.update(obj, this.scope);
  }

  async createCredentialSecret(secret: CredentialSecret): Promise<void> {
    // The apiserver's answer echoes the data: it is dropped here, not returned.
    await this.core.secrets.create(
      {
        apiVersion: 'v1',
        kind: 'Secret',
        metadata: {
          name: secret.name,
          namespace: this.namespace,
          labels: {
            'app.kubernetes.io/part-of': 'rackside',
            'app.kubernetes.io/managed-by': FIELD_MANAGER,
            // The credential binding (docs/architecture.md, "Adding machines"): the operator reads and deletes only a
            // Secret with this label and the ownerReference below (same uid).
            [CREDENTIAL_OF_LABEL]: secret.owner.name,
          },
          // No blockOwnerDeletion: that would need update on machinereclaims/finalizers.
          ownerReferences: [
            {
              apiVersion: RACKSIDE_API_VERSION,
              kind: machineReclaimResource.kind,
              name: secret.owner.name,
              uid: secret.owner.uid,
              controller: true,
            },
          ],
        },
        type: 'Opaque',
        // Single use: nobody changes it, the operator deletes it.
        immutable: true,
        data: {
          [secret.key]: Buffer.from(secret.talosconfig, 'utf8').toString(
            'base64',
          ),
        },
      },
      this.scope,
    );
  }

  kubernetesReclaimAccess(): Promise<KubernetesReclaimAccess> {
    const now = Date.now();
    if (!this.access || now - this.access.at > ACCESS_REVIEW_TTL_MS) {
      const answer = this.reviewReclaimAccess();
      this.access = { at: now, answer };
      // A failed review is not remembered: the next request asks again.
      answer.catch(() => {
        if (this.access?.answer === answer) this.access = undefined;
      });
    }
    return this.access.answer;
  }

  private async reviewReclaimAccess(): Promise<KubernetesReclaimAccess> {
    const denied: string[] = [];
    for (const verb of RECLAIM_VERBS) {
      let review: { status?: { allowed?: boolean } };
      try {
        review = await this.http.request({
          method: 'POST',
          path: '/apis/authorization.k8s.io/v1/selfsubjectaccessreviews',
          body: {
            apiVersion: 'authorization.k8s.io/v1',
            kind: 'SelfSubjectAccessReview',
            spec: {
              resourceAttributes: {
                namespace: this.namespace,
                verb,
                group: RACKSIDE_GROUP,
                resource: machineReclaimResource.plural,
              },
            },
          },
        });
      } catch (error) {
        throw toBackstageError(error);
      }
      if (review.status?.allowed !== true) denied.push(verb);
    }
    if (denied.length === 0) return { allowed: true };
    return {
      allowed: false,
      reason: `Rackside's Kubernetes identity in cluster ${
        this.cluster
      } may not ${denied.join(', ')} machinereclaims in namespace ${
        this.namespace
      }: bind a role with the ${MACHINE_RECLAIM_VERB} verb to it`,
    };
  }

  onChange(listener: () => void): () => void {
    const offs = [this.clusterCache, this.machineCache, this.reclaimCache].map(
      cache => cache.on('changed', () => listener()),
    );
    return () => offs.forEach(off => off());
  }

  async stop(): Promise<void> {
    await Promise.all([
      this.clusterCache.stop(),
      this.machineCache.stop(),
      this.reclaimCache.stop(),
    ]);
  }
}
