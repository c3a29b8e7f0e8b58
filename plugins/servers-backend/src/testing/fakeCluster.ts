import { ConflictError, NotFoundError } from '@backstage/errors';
import type {
  PowerProvider,
  RequestFlag,
} from '@rackside/plugin-servers-common';
import type { NodeObject } from '@rackside/plugin-servers-node';
import type {
  ClusterState,
  MaintenanceObject,
  NewMaintenance,
  RequestFlagName,
} from '../service/types';

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

/** An in-memory ClusterState that records every write. */
export class FakeCluster implements ClusterState {
  readonly created: NewMaintenance[] = [];
  readonly flags: Array<{
    name: string;
    flag: RequestFlagName;
    value: RequestFlag;
  }> = [];
  private listeners = new Set<() => void>();

  constructor(
    readonly name: string,
    public nodeList: NodeObject[],
    public maintenanceList: MaintenanceObject[] = [],
    public provider?: PowerProvider,
    readonly title: string = name,
  ) {}

  get writes(): number {
    return this.created.length + this.flags.length;
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
