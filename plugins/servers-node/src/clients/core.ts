import type {
  CoreV1Event,
  KubeConfig,
  V1Node,
  V1Pod,
  V1PodDisruptionBudget,
  V1Secret,
} from '@kubernetes/client-node';
import { NotFoundError } from '@backstage/errors';
import type { VirtualMachineInstanceLike } from '@rackside/plugin-servers-common';
import { kubeErrorStatus, toBackstageError } from './errors';
import { KubeHttp } from './kubeHttp';
import { ResourceClient, ResourceClientOptions } from './ResourceClient';
import { KubeObject, ResourceDescriptor, Wire } from './types';

/** Descriptors of the built-in kinds Rackside reads and writes. */
export const coreResources = {
  nodes: {
    group: '',
    version: 'v1',
    plural: 'nodes',
    kind: 'Node',
    namespaced: false,
  },
  pods: {
    group: '',
    version: 'v1',
    plural: 'pods',
    kind: 'Pod',
    namespaced: true,
  },
  podDisruptionBudgets: {
    group: 'policy',
    version: 'v1',
    plural: 'poddisruptionbudgets',
    kind: 'PodDisruptionBudget',
    namespaced: true,
  },
  persistentVolumeClaims: {
    group: '',
    version: 'v1',
    plural: 'persistentvolumeclaims',
    kind: 'PersistentVolumeClaim',
    namespaced: true,
  },
  persistentVolumes: {
    group: '',
    version: 'v1',
    plural: 'persistentvolumes',
    kind: 'PersistentVolume',
    namespaced: false,
  },
  events: {
    group: '',
    version: 'v1',
    plural: 'events',
    kind: 'Event',
    namespaced: true,
  },
  secrets: {
    group: '',
    version: 'v1',
    plural: 'secrets',
    kind: 'Secret',
    namespaced: true,
  },
  /** Not built in: KubeVirt's, read where the cluster serves it (DESIGN section 16). */
  virtualMachineInstances: {
    group: 'kubevirt.io',
    version: 'v1',
    plural: 'virtualmachineinstances',
    kind: 'VirtualMachineInstance',
    namespaced: true,
  },
} satisfies Record<string, ResourceDescriptor>;

/** A Node as the apiserver sends it. */
export type NodeObject = Wire<V1Node>;
/** A Pod as the apiserver sends it. */
export type PodObject = Wire<V1Pod>;
/** A policy/v1 PodDisruptionBudget as the apiserver sends it. */
export type PodDisruptionBudgetObject = Wire<V1PodDisruptionBudget>;
/** A core/v1 Event as the apiserver sends it. */
export type EventObject = Wire<CoreV1Event>;
/** A Secret as the apiserver sends it. */
export type SecretObject = Wire<V1Secret>;

/** What became of an eviction request. */
export type EvictionResult =
  | { outcome: 'evicted' }
  /** The pod no longer exists: for a drain as good as evicted. */
  | { outcome: 'gone' }
  /**
   * 429: a PodDisruptionBudget forbids it now. `message` is the apiserver's,
   * `causes` its details (they name the budget).
   */
  | { outcome: 'blocked'; message: string; causes: string[] };

/** An Event to record on an object. */
export interface EventInput {
  type: 'Normal' | 'Warning';
  /** UpperCamelCase, e.g. `Cordoned`. */
  reason: string;
  message: string;
  /** What was done, e.g. `Cordon`. */
  action?: string;
}

/** Who records Events (shows as the source in `kubectl describe`). */
export interface EventSource {
  component: string;
  /** e.g. the pod name of the operator replica. */
  instance?: string;
}

/** Up to this many nodes, {@link CoreClient.drainInputsOf} lists pods node by node. */
export const FEW_NODES = 4;

type ClaimFacts = {
  metadata: { name?: string; namespace?: string };
  spec: { volumeName?: string };
};
type VolumeFacts = {
  metadata: { name?: string };
  spec: { local?: unknown; hostPath?: unknown; nodeAffinity?: any };
};

/** Of a claim, what tells node-local data apart: its name and bound volume. */
function claimFacts(c: any): ClaimFacts {
  return {
    metadata: { name: c.metadata?.name, namespace: c.metadata?.namespace },
    spec: { volumeName: c.spec?.volumeName },
  };
}

/** Of a PersistentVolume, what tells node-local data apart. */
function volumeFacts(v: any): VolumeFacts {
  return {
    metadata: { name: v.metadata?.name },
    spec: {
      local: v.spec?.local,
      hostPath: v.spec?.hostPath,
      nodeAffinity: v.spec?.nodeAffinity,
    },
  };
}

/** What {@link CoreClient.drainInputsOf} reads of many nodes. */
export interface NodesDrainInputs {
  /** Every asked node, with the pods bound to it (none: an empty list). */
  podsByNode: Map<string, PodObject[]>;
  claims: ClaimFacts[];
  volumes: VolumeFacts[];
  /** Those on the asked nodes; absent where the cluster has no such API. */
  virtualMachines?: Array<Required<VirtualMachineInstanceLike>>;
}

/**
 * Clients for the built-in kinds plus the few compound operations the
 * backend and the operator need. Errors are `@backstage/errors` errors.
 */
export class CoreClient {
  readonly nodes: ResourceClient<NodeObject>;
  readonly pods: ResourceClient<PodObject>;
  readonly podDisruptionBudgets: ResourceClient<PodDisruptionBudgetObject>;
  readonly events: ResourceClient<EventObject>;
  readonly secrets: ResourceClient<SecretObject>;
  private readonly http: KubeHttp;

  constructor(
    kubeConfig: KubeConfig | KubeHttp,
    options: ResourceClientOptions = {},
  ) {
    this.http =
      kubeConfig instanceof KubeHttp
        ? kubeConfig
        : new KubeHttp(kubeConfig, { timeoutMs: options.timeoutMs });
    this.nodes = new ResourceClient(this.http, coreResources.nodes, options);
    this.pods = new ResourceClient(this.http, coreResources.pods, options);
    this.podDisruptionBudgets = new ResourceClient(
      this.http,
      coreResources.podDisruptionBudgets,
      options,
    );
    this.events = new ResourceClient(this.http, coreResources.events, options);
    this.secrets = new ResourceClient(
      this.http,
      coreResources.secrets,
      options,
    );
  }

  /**
   * What tells node-local data apart in a drain (servers-common planDrain's context):
   * the node's labels, the claims of these namespaces (name and bound volume) and every
   * PersistentVolume (name, local/hostPath, node affinity). Only those fields are kept.
   */
  async drainStorage(
    nodeName: string,
    namespaces: readonly string[],
  ): Promise<{
    nodeLabels: Record<string, string>;
    claims: ClaimFacts[];
    volumes: VolumeFacts[];
  }> {
    const claimsClient = new ResourceClient<KubeObject>(
      this.http,
      coreResources.persistentVolumeClaims,
    );
    const volumesClient = new ResourceClient<KubeObject>(
      this.http,
      coreResources.persistentVolumes,
    );
    const [node, claimLists, volumes] = await Promise.all([
      this.nodes.get(nodeName).catch(error => {
        if (error instanceof NotFoundError) return undefined;
        throw error;
      }),
      Promise.all(
        [...new Set(namespaces)]
          .filter(Boolean)
          .map(namespace => claimsClient.list({ namespace })),
      ),
      volumesClient.list(),
    ]);
    return {
      nodeLabels: node?.metadata?.labels ?? {},
      claims: claimLists.flatMap(l => l.items).map(claimFacts),
      volumes: volumes.items.map(volumeFacts),
    };
  }

  /**
   * What the drain pre-flight reads of many nodes at once (a plan's): their pods
   * ({@link CoreClient.podsOnNodes}) and {@link CoreClient.drainStorageOfCluster}.
   */
  async drainInputsOf(nodeNames: readonly string[]): Promise<NodesDrainInputs> {
    const [podsByNode, storage] = await Promise.all([
      this.podsOnNodes(nodeNames),
      this.drainStorageOfCluster(nodeNames),
    ]);
    return { podsByNode, ...storage };
  }

  /**
   * The pods bound to each of `nodeNames`, in a number of requests that does not grow
   * with the nodes: up to four nodes (`FEW_NODES`) a list per node (small and quick),
   * beyond one cluster-wide list (paged by the client, 500 a page).
   */
  async podsOnNodes(
    nodeNames: readonly string[],
  ): Promise<Map<string, PodObject[]>> {
    const wanted = new Set(nodeNames);
    let pods: PodObject[];
    if (wanted.size <= FEW_NODES) {
      pods = (
        await Promise.all([...wanted].map(n => this.podsOnNode(n)))
      ).flat();
    } else {
      pods = (await this.pods.list()).items.filter(p =>
        wanted.has(p.spec?.nodeName ?? ''),
      );
    }
    const byNode = new Map<string, PodObject[]>([...wanted].map(n => [n, []]));
    for (const pod of pods) byNode.get(pod.spec?.nodeName ?? '')?.push(pod);
    return byNode;
  }

  /**
   * What tells node-local data apart for many nodes (a plan's): every claim, every
   * PersistentVolume and the VirtualMachineInstances on those nodes, three lists
   * whatever the number of nodes. Node labels come from the caller's watch cache.
   */
  async drainStorageOfCluster(
    nodeNames: readonly string[],
  ): Promise<Omit<NodesDrainInputs, 'podsByNode'>> {
    const wanted = new Set(nodeNames);
    const claimsClient = new ResourceClient<KubeObject>(
      this.http,
      coreResources.persistentVolumeClaims,
    );
    const volumesClient = new ResourceClient<KubeObject>(
      this.http,
      coreResources.persistentVolumes,
    );
    const [claims, volumes, virtualMachines] = await Promise.all([
      claimsClient.list(),
      volumesClient.list(),
      this.virtualMachineInstances(),
    ]);
    return {
      claims: claims.items.map(claimFacts),
      volumes: volumes.items.map(volumeFacts),
      ...(virtualMachines
        ? {
            virtualMachines: virtualMachines.filter(v =>
              wanted.has(v.status.nodeName ?? ''),
            ),
          }
        : {}),
    };
  }

  /**
   * The kubevirt.io/v1 VirtualMachineInstances running on one node (by `status.nodeName`,
   * which a field selector cannot select on a custom resource), with only the fields the
   * drain reads; undefined where the cluster has no such API (404), so that callers show
   * no virtual machine section rather than an error.
   */
  async virtualMachineInstancesOn(
    nodeName: string,
  ): Promise<Array<Required<VirtualMachineInstanceLike>> | undefined> {
    return (await this.virtualMachineInstances())?.filter(
      v => v.status.nodeName === nodeName,
    );
  }

  /** Every VirtualMachineInstance, slimmed as `virtualMachineInstancesOn` says. */
  private async virtualMachineInstances(): Promise<
    Array<Required<VirtualMachineInstanceLike>> | undefined
  > {
    const client = new ResourceClient<KubeObject>(
      this.http,
      coreResources.virtualMachineInstances,
    );
    let items: any[];
    try {
      items = (await client.list()).items;
    } catch (error) {
      if (error instanceof NotFoundError) return undefined;
      throw error;
    }
    return items.map(v => ({
      metadata: {
        name: v.metadata?.name,
        namespace: v.metadata?.namespace,
      },
      spec: { evictionStrategy: v.spec?.evictionStrategy },
      status: {
        nodeName: v.status?.nodeName,
        phase: v.status?.phase,
        conditions: (v.status?.conditions ?? []).map((c: any) => ({
          type: c.type,
          status: c.status,
          reason: c.reason,
          message: c.message,
        })),
      },
    }));
  }

  /** The pods bound to one node, in every namespace. */
  async podsOnNode(nodeName: string): Promise<PodObject[]> {
    const { items } = await this.pods.list({
      fieldSelector: `spec.nodeName=${nodeName}`,
    });
    return items;
  }

  /**
   * Asks the apiserver to evict a pod (policy/v1 Eviction), which honours
   * PodDisruptionBudgets. A budget refusal (429) is a result, not an error;
   * anything else unexpected throws.
   */
  async evictPod(
    namespace: string,
    name: string,
    options: { gracePeriodSeconds?: number; dryRun?: boolean } = {},
  ): Promise<EvictionResult> {
    try {
      await this.http.request({
        method: 'POST',
        path: this.pods.itemPath(name, namespace, 'eviction'),
        body: {
          apiVersion: 'policy/v1',
          kind: 'Eviction',
          metadata: { name, namespace },
          deleteOptions: {
            gracePeriodSeconds: options.gracePeriodSeconds,
            dryRun: options.dryRun ? ['All'] : undefined,
          },
        },
      });
      return { outcome: 'evicted' };
    } catch (error) {
      const status = kubeErrorStatus(error);
      if (status?.code === 429) {
        return {
          outcome: 'blocked',
          message: status.message ?? 'eviction refused by a disruption budget',
          causes: (status.details?.causes ?? [])
            .map(c => c.message ?? '')
            .filter(Boolean),
        };
      }
      const mapped = toBackstageError(error);
      if (mapped instanceof NotFoundError) return { outcome: 'gone' };
      throw mapped;
    }
  }

  /**
   * Records a core/v1 Event about `target` (it needs apiVersion, kind and
   * metadata.name; uid and resourceVersion are linked when present). Events
   * about cluster-scoped objects go to the `default` namespace, as kubectl
   * expects.
   */
  async recordEvent(
    target: KubeObject,
    event: EventInput,
    source: EventSource,
  ): Promise<EventObject> {
    const meta = target.metadata ?? {};
    if (!meta.name || !target.kind) {
      throw new TypeError('recordEvent: target needs kind and metadata.name');
    }
    const namespace = meta.namespace || 'default';
    const now = new Date().toISOString();
    const body: EventObject = {
      metadata: {
        name: `${meta.name}.${Date.now().toString(16)}${Math.floor(
          Math.random() * 0x10000,
        )
          .toString(16)
          .padStart(4, '0')}`,
        namespace,
      },
      involvedObject: {
        apiVersion: target.apiVersion,
        kind: target.kind,
        name: meta.name,
        namespace: meta.namespace,
        uid: meta.uid,
        resourceVersion: meta.resourceVersion,
      },
      type: event.type,
      reason: event.reason,
      message: event.message,
      action: event.action,
      source: { component: source.component },
      reportingComponent: source.component,
      reportingInstance: source.instance ?? '',
      firstTimestamp: now,
      lastTimestamp: now,
      count: 1,
    };
    return this.events.create(body, { namespace });
  }
}
