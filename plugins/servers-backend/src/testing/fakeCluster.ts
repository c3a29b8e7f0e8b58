import { ConflictError, NotFoundError } from '@backstage/errors';
import type {
  Approval,
  ServerHealthRefresh,
  PowerProvider,
  RequestFlag,
  ServerHealth,
} from '@rackside/plugin-servers-common';
import type {
  NodeObject,
  PodDisruptionBudgetObject,
  PodObject,
} from '@rackside/plugin-servers-node';
import type {
  ClusterState,
  MaintenanceObject,
  NewMaintenance,
  NewPlan,
  PlanObject,
  RequestFlagName,
  ServerBmcRecord,
} from '../cluster/types';
import type { ClusterAlerts } from '../cluster/nodeAlerts';

export function fakeNode(
  name: string,
  options: {
    controlPlane?: boolean;
    virtual?: boolean;
    ready?: boolean;
    unschedulable?: boolean;
    labels?: Record<string, string>;
  } = {},
): NodeObject {
  const labels: Record<string, string> = {
    'kubernetes.io/hostname': name,
    ...options.labels,
  };
  if (options.controlPlane)
    labels['node-role.kubernetes.io/control-plane'] = '';
  if (options.virtual) labels['rackside.dev/virtual-node'] = 'true';
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name, labels, resourceVersion: '1' },
    spec: options.unschedulable ? { unschedulable: true } : {},
    status: {
      conditions: [
        {
          type: 'Ready',
          status: options.ready === false ? 'False' : 'True',
        } as any,
      ],
      nodeInfo: { systemUUID: `uuid-${name}` } as any,
    },
  };
}

/** A node reporting the Talos version it runs, as the kubelet does in its osImage. */
export function fakeTalosNode(
  name: string,
  version: string,
  options: Parameters<typeof fakeNode>[1] = {},
): NodeObject {
  const node = fakeNode(name, options);
  node.status!.nodeInfo!.osImage = `Talos (${version})`;
  return node;
}

/**
 * The PowerProvider as the operator reports it ready: the talos channel reboots only,
 * the redfish channel also shuts down, powers on and confirms power off.
 */
export function fakePowerProvider(
  type: 'talos' | 'redfish' = 'talos',
): PowerProvider {
  const redfish = type === 'redfish';
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'PowerProvider',
    metadata: { name: 'default', generation: 1 },
    spec: { type, attendedRack: false } as any,
    status: {
      reboot: true,
      shutdown: redfish,
      powerOn: redfish,
      confirmsPowerOff: redfish,
      observedGeneration: 1,
    },
  };
}

/** An in-memory ClusterState that records every write. */
export class FakeCluster implements ClusterState {
  readonly created: NewMaintenance[] = [];
  readonly flags: Array<{
    name: string;
    flag: RequestFlagName;
    value: RequestFlag;
  }> = [];
  private listeners = new Set<() => void>();
  /** Pods per node and the budgets, as the pre-flight reads them. */
  pods = new Map<string, PodObject[]>();
  budgets: PodDisruptionBudgetObject[] = [];

  constructor(
    readonly name: string,
    public nodeList: NodeObject[],
    public maintenanceList: MaintenanceObject[] = [],
    public provider?: PowerProvider,
    readonly title: string = name,
  ) {}

  /** The alerts `alerts()` answers; undefined: no Alertmanager configured. */
  alertsState?: ClusterAlerts;

  async alerts(): Promise<ClusterAlerts | undefined> {
    return this.alertsState;
  }

  /** Plans created and plan spec updates, in order. */
  readonly createdPlans: NewPlan[] = [];
  readonly planUpdates: Array<{ name: string; spec: PlanObject['spec'] }> = [];
  planList: PlanObject[] = [];

  get writes(): number {
    return (
      this.created.length +
      this.flags.length +
      this.healthRefreshes.length +
      this.createdPlans.length +
      this.planUpdates.length +
      this.approvalWrites.length
    );
  }

  async plans() {
    return this.planList;
  }
  async createPlan(obj: NewPlan): Promise<PlanObject> {
    if (this.planList.some(p => p.metadata.name === obj.metadata.name)) {
      throw new ConflictError(`${obj.metadata.name} already exists`);
    }
    this.createdPlans.push(obj);
    const stored: PlanObject = {
      ...obj,
      metadata: {
        ...obj.metadata,
        creationTimestamp: new Date().toISOString(),
      },
      spec: obj.spec as PlanObject['spec'],
    };
    this.planList.push(stored);
    this.listeners.forEach(l => l());
    return stored;
  }
  async updatePlanSpec(
    name: string,
    change: (current: PlanObject) => PlanObject['spec'],
  ): Promise<PlanObject> {
    const p = this.planList.find(x => x.metadata.name === name);
    if (!p) throw new NotFoundError(name);
    const spec = change(p);
    this.planUpdates.push({ name, spec });
    p.spec = spec;
    this.listeners.forEach(l => l());
    return p;
  }

  async nodes() {
    return this.nodeList;
  }
  async maintenances() {
    return this.maintenanceList;
  }
  async powerProvider() {
    return this.provider;
  }
  /** Nodes with a ServerBMC. */
  bmcNodes: string[] = [];
  async serverBmcNodes() {
    return this.bmcNodes;
  }
  /** The health readings and refresh requests of the ServerBMCs, by node. */
  bmcHealth = new Map<string, ServerHealth>();
  bmcRefresh = new Map<string, ServerHealthRefresh>();
  /** Each ServerBMC's status.firmwareHistory, by node. */
  bmcFirmwareHistory = new Map<string, ServerBmcRecord['firmwareHistory']>();
  /** Each ServerBMC's resourceVersion, moved by every write (as the apiserver does). */
  private bmcVersions = new Map<string, number>();
  /** The refresh patches that were accepted. */
  readonly healthRefreshes: Array<{
    name: string;
    refresh: ServerHealthRefresh;
  }> = [];
  private bmcRecord(name: string): ServerBmcRecord {
    const health = this.bmcHealth.get(name);
    const healthRefresh = this.bmcRefresh.get(name);
    const firmwareHistory = this.bmcFirmwareHistory.get(name);
    return {
      name,
      resourceVersion: String(this.bmcVersions.get(name) ?? 1),
      ...(health ? { health } : {}),
      ...(healthRefresh ? { healthRefresh } : {}),
      ...(firmwareHistory ? { firmwareHistory } : {}),
    };
  }
  async serverBmcs(): Promise<ServerBmcRecord[]> {
    return this.bmcNodes.map(name => this.bmcRecord(name));
  }
  async readServerBmc(name: string) {
    return this.bmcNodes.includes(name) ? this.bmcRecord(name) : undefined;
  }
  /** The operator's status write: a new reading moves the resourceVersion. */
  setHealth(name: string, health: ServerHealth) {
    this.bmcHealth.set(name, health);
    this.bmcVersions.set(name, (this.bmcVersions.get(name) ?? 1) + 1);
    this.listeners.forEach(l => l());
  }
  async requestHealthRefresh(
    name: string,
    resourceVersion: string,
    refresh: ServerHealthRefresh,
  ): Promise<ServerBmcRecord> {
    if (!this.bmcNodes.includes(name)) throw new NotFoundError(name);
    // Yield first, so two requests at once both read the same version before either writes.
    await new Promise(resolve => setImmediate(resolve));
    if (resourceVersion !== this.bmcRecord(name).resourceVersion) {
      throw new ConflictError(
        `Operation cannot be fulfilled on serverbmcs.rackside.dev "${name}": the object has been modified`,
      );
    }
    this.bmcRefresh.set(name, refresh);
    this.bmcVersions.set(name, (this.bmcVersions.get(name) ?? 1) + 1);
    this.healthRefreshes.push({ name, refresh });
    return this.bmcRecord(name);
  }
  async podsOnNode(nodeName: string) {
    return this.pods.get(nodeName) ?? [];
  }
  async podDisruptionBudgets() {
    return this.budgets;
  }
  /**
   * Claims and volumes, as the drain pre-flight reads them (docs/drain.md), and the
   * VirtualMachineInstances (absent: the cluster has no such API).
   */
  storage: {
    nodeLabels?: Record<string, string>;
    claims: any[];
    volumes: any[];
    virtualMachines?: any[];
  } = { claims: [], volumes: [] };
  storageReads: Array<{ node: string; namespaces: string[] }> = [];
  async drainStorage(node: string, namespaces: string[]) {
    this.storageReads.push({ node, namespaces });
    return this.storage;
  }
  async createMaintenance(obj: NewMaintenance): Promise<MaintenanceObject> {
    if (this.maintenanceList.some(m => m.metadata.name === obj.metadata.name)) {
      throw new ConflictError(`${obj.metadata.name} already exists`);
    }
    this.created.push(obj);
    const stored: MaintenanceObject = {
      ...obj,
      metadata: {
        ...obj.metadata,
        creationTimestamp: new Date().toISOString(),
      },
      spec: obj.spec as MaintenanceObject['spec'],
    };
    this.maintenanceList.push(stored);
    this.listeners.forEach(l => l());
    return stored;
  }
  async setRequestFlag(
    name: string,
    flag: RequestFlagName,
    value: RequestFlag,
  ): Promise<MaintenanceObject> {
    const m = this.maintenanceList.find(x => x.metadata.name === name);
    if (!m) throw new NotFoundError(name);
    this.flags.push({ name, flag, value });
    m.spec = { ...m.spec, [flag]: value };
    this.listeners.forEach(l => l());
    return m;
  }
  /** Each maintenance's and plan's resourceVersion, moved by every decision (as the apiserver does). */
  private readonly objectVersions = new Map<string, number>();
  /** The approval decisions that were written, in order. */
  readonly approvalWrites: Array<{
    kind: 'maintenance' | 'plan';
    name: string;
    approval: Approval;
  }> = [];
  private versionOf(key: string): string {
    return String(this.objectVersions.get(key) ?? 1);
  }
  /** Another writer (the operator) moved the object. */
  touch(kind: 'maintenance' | 'plan', name: string) {
    const key = `${kind}/${name}`;
    this.objectVersions.set(key, Number(this.versionOf(key)) + 1);
  }
  async readMaintenance(name: string) {
    const m = this.maintenanceList.find(x => x.metadata.name === name);
    if (!m) return undefined;
    return structuredClone({
      ...m,
      metadata: {
        ...m.metadata,
        resourceVersion: this.versionOf(`maintenance/${name}`),
      },
    });
  }
  async readPlan(name: string) {
    const p = this.planList.find(x => x.metadata.name === name);
    if (!p) return undefined;
    return structuredClone({
      ...p,
      metadata: {
        ...p.metadata,
        resourceVersion: this.versionOf(`plan/${name}`),
      },
    });
  }
  private async decide<O extends { spec: { approval?: Approval } }>(
    kind: 'maintenance' | 'plan',
    stored: O | undefined,
    name: string,
    resourceVersion: string,
    approval: Approval,
  ): Promise<O> {
    if (!stored) throw new NotFoundError(name);
    // Yield first, so two decisions at once both read the same version before either writes.
    await new Promise(resolve => setImmediate(resolve));
    if (resourceVersion !== this.versionOf(`${kind}/${name}`)) {
      throw new ConflictError(
        `Operation cannot be fulfilled on ${kind} "${name}": the object has been modified`,
      );
    }
    stored.spec = { ...stored.spec, approval };
    this.touch(kind, name);
    this.approvalWrites.push({ kind, name, approval });
    this.listeners.forEach(l => l());
    return stored;
  }
  async decideMaintenanceApproval(
    name: string,
    resourceVersion: string,
    approval: Approval,
  ): Promise<MaintenanceObject> {
    const m = this.maintenanceList.find(x => x.metadata.name === name);
    return this.decide('maintenance', m, name, resourceVersion, approval);
  }
  async decidePlanApproval(
    name: string,
    resourceVersion: string,
    approval: Approval,
  ): Promise<PlanObject> {
    const p = this.planList.find(x => x.metadata.name === name);
    return this.decide('plan', p, name, resourceVersion, approval);
  }
  onChange(listener: () => void) {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }
  emitChange() {
    this.listeners.forEach(l => l());
  }
}

export function fakeMaintenance(
  name: string,
  nodeName: string,
  intent: MaintenanceObject['spec']['intent'],
  phase: string | undefined,
  extra: Partial<MaintenanceObject['spec']> = {},
): MaintenanceObject {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name, creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: {
      nodeName,
      intent,
      reason: 'planned work on the rack',
      requestedBy: 'user:default/someone',
      ...extra,
    } as MaintenanceObject['spec'],
    status: phase ? ({ phase } as any) : undefined,
  };
}

/** A running pod of a ReplicaSet (or bare, with `owner: null`) on a node. */
export function fakePod(
  name: string,
  nodeName: string,
  options: {
    namespace?: string;
    app?: string;
    owner?: string | null;
    emptyDir?: boolean;
  } = {},
): PodObject {
  const owner = options.owner === undefined ? 'ReplicaSet/rs' : options.owner;
  const [kind, ownerName] = (owner ?? '').split('/');
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      namespace: options.namespace ?? 'shop',
      labels: { app: options.app ?? name },
      ownerReferences: owner
        ? [
            {
              apiVersion: 'apps/v1',
              kind,
              name: ownerName,
              uid: 'u',
              controller: true,
            },
          ]
        : undefined,
    },
    spec: {
      nodeName,
      containers: [],
      volumes: options.emptyDir ? [{ name: 'scratch', emptyDir: {} }] : [],
    },
    status: { phase: 'Running' },
  };
}

/** A policy/v1 PodDisruptionBudget selecting `app`. */
export function fakeBudget(
  name: string,
  app: string,
  disruptionsAllowed: number,
  namespace = 'shop',
): PodDisruptionBudgetObject {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name, namespace },
    spec: { selector: { matchLabels: { app } } },
    status: {
      disruptionsAllowed,
      currentHealthy: 1,
      desiredHealthy: 1,
      expectedPods: 1,
    },
  };
}
