import { ConflictError, NotFoundError } from '@backstage/errors';
import {
  RACKSIDE_API_VERSION,
  RECLAIM_ADDED_ADDRESSES_ANNOTATION,
  type MachineReclaim,
  type MachineReclaimInput,
  type MachineReclaimStatus,
  type TalosAddressStatus,
  type TalosCluster,
  type TalosMachine,
  type TalosMachineStatus,
} from '@rackside/plugin-servers-common';
import type {
  CredentialSecret,
  KubernetesReclaimAccess,
  MachinesState,
} from '../cluster/machinesTypes';

const NAMESPACE = 'rackside-system';

export function fakeTalosCluster(
  name: string,
  options: {
    addresses?: string[];
    status?: TalosAddressStatus[];
    reclaimAdded?: string[];
    /** Default: the rack's machine network 127.0.10.0/24. */
    allowedNetworks?: string[];
    talosPort?: number;
  } = {},
): TalosCluster {
  return {
    apiVersion: RACKSIDE_API_VERSION,
    kind: 'TalosCluster',
    metadata: {
      name,
      namespace: NAMESPACE,
      resourceVersion: '1',
      annotations: options.reclaimAdded
        ? {
            [RECLAIM_ADDED_ADDRESSES_ANNOTATION]:
              options.reclaimAdded.join(','),
          }
        : undefined,
    },
    spec: {
      discovery: {
        allowedNetworks: options.allowedNetworks ?? ['127.0.10.0/24'],
        talosPort: options.talosPort ?? 50000,
        addresses: options.addresses ?? [],
        intervalSeconds: 300,
      },
      joinConfigSecretRef: { name: `${name}-join`, key: 'config.yaml' },
      talosconfigSecretRef: { name: `${name}-talosconfig`, key: 'talosconfig' },
    },
    status: options.status ? { addresses: options.status } : undefined,
  };
}

export function fakeTalosMachine(
  uuid: string,
  cluster: string,
  status: Partial<TalosMachineStatus> = {},
  created = '2026-12-01T10:00:00Z',
): TalosMachine {
  return {
    apiVersion: RACKSIDE_API_VERSION,
    kind: 'TalosMachine',
    metadata: {
      name: uuid,
      namespace: NAMESPACE,
      resourceVersion: '1',
      creationTimestamp: created,
    },
    spec: { cluster },
    status: { phase: 'Pending', ...status },
  };
}

export function fakeReclaim(
  name: string,
  address: string,
  targetCluster: string,
  status?: Partial<MachineReclaimStatus>,
  created = '2026-12-01T10:00:00Z',
): MachineReclaim {
  return {
    apiVersion: RACKSIDE_API_VERSION,
    kind: 'MachineReclaim',
    metadata: {
      name,
      namespace: NAMESPACE,
      uid: `uid-${name}`,
      resourceVersion: '1',
      creationTimestamp: created,
    },
    spec: {
      address,
      targetCluster,
      credentialSecretRef: { name: `${name}-talosconfig`, key: 'talosconfig' },
      ttlMinutes: 15,
      requestedBy: 'user:default/someone',
      reason: 'an earlier request',
    },
    status: status as MachineReclaimStatus | undefined,
  };
}

/**
 * An in-memory MachinesState that records every write. Updates check the
 * resourceVersion like the apiserver (ConflictError when it moved) and bump it.
 */
export class FakeMachines implements MachinesState {
  readonly namespace = NAMESPACE;
  readonly clusterList: TalosCluster[];
  readonly machineList: TalosMachine[];
  readonly reclaimList: MachineReclaim[];
  readonly writes: Array<{ kind: string; verb: string; name: string }> = [];
  readonly secrets: CredentialSecret[] = [];
  access: KubernetesReclaimAccess = { allowed: true };
  /** Make the next write of this kind fail with this error. */
  failNext = new Map<string, Error>();
  private uid = 0;
  private listeners = new Set<() => void>();

  constructor(
    readonly cluster: string,
    options: {
      clusters?: TalosCluster[];
      machines?: TalosMachine[];
      reclaims?: MachineReclaim[];
    } = {},
  ) {
    this.clusterList = options.clusters ?? [];
    this.machineList = options.machines ?? [];
    this.reclaimList = options.reclaims ?? [];
  }

  async talosClusters() {
    return structuredClone(this.clusterList);
  }
  async talosMachines() {
    return structuredClone(this.machineList);
  }
  async reclaims() {
    return structuredClone(this.reclaimList);
  }
  async freshReclaims() {
    return structuredClone(this.reclaimList);
  }
  async freshTalosMachines() {
    return structuredClone(this.machineList);
  }

  private find<T extends { metadata: { name: string } }>(
    list: T[],
    kind: string,
    name: string,
  ): T {
    const found = list.find(o => o.metadata.name === name);
    if (!found) throw new NotFoundError(`${kind} "${name}" not found`);
    return structuredClone(found);
  }

  async freshTalosCluster(name: string) {
    return this.find(this.clusterList, 'talosclusters', name);
  }
  async freshTalosMachine(name: string) {
    return this.find(this.machineList, 'talosmachines', name);
  }
  async freshReclaim(name: string) {
    return this.find(this.reclaimList, 'machinereclaims', name);
  }

  private failIfAsked(kind: string) {
    const error = this.failNext.get(kind);
    if (error) {
      this.failNext.delete(kind);
      throw error;
    }
  }

  private replace<T extends { metadata: any }>(
    list: T[],
    kind: string,
    obj: T,
  ): T {
    this.failIfAsked(kind);
    const i = list.findIndex(o => o.metadata.name === obj.metadata.name);
    if (i < 0)
      throw new NotFoundError(`${kind} "${obj.metadata.name}" not found`);
    if (list[i].metadata.resourceVersion !== obj.metadata.resourceVersion) {
      throw new ConflictError(
        `Operation cannot be fulfilled on ${kind} "${obj.metadata.name}": the object has been modified`,
      );
    }
    const next = structuredClone(obj);
    next.metadata.resourceVersion = String(
      Number(obj.metadata.resourceVersion ?? '0') + 1,
    );
    list[i] = next;
    this.writes.push({ kind, verb: 'update', name: obj.metadata.name });
    this.notify();
    return structuredClone(next);
  }

  async updateTalosCluster(obj: TalosCluster) {
    return this.replace(this.clusterList, 'talosclusters', obj);
  }
  async updateTalosMachine(obj: TalosMachine) {
    return this.replace(this.machineList, 'talosmachines', obj);
  }
  async updateReclaim(obj: MachineReclaim) {
    return this.replace(this.reclaimList, 'machinereclaims', obj);
  }

  async createReclaim(obj: MachineReclaimInput) {
    this.failIfAsked('machinereclaims');
    if (this.reclaimList.some(r => r.metadata.name === obj.metadata.name)) {
      throw new ConflictError(
        `machinereclaims "${obj.metadata.name}" already exists`,
      );
    }
    const created = {
      ...structuredClone(obj),
      metadata: {
        ...obj.metadata,
        uid: `uid-${++this.uid}`,
        resourceVersion: '1',
        creationTimestamp: new Date().toISOString(),
      },
    } as MachineReclaim;
    this.reclaimList.push(created);
    this.writes.push({
      kind: 'machinereclaims',
      verb: 'create',
      name: obj.metadata.name,
    });
    this.notify();
    return structuredClone(created);
  }

  async createCredentialSecret(secret: CredentialSecret) {
    this.failIfAsked('secrets');
    this.secrets.push({ ...secret });
    this.writes.push({ kind: 'secrets', verb: 'create', name: secret.name });
  }

  async kubernetesReclaimAccess() {
    return this.access;
  }

  onChange(listener: () => void) {
    this.listeners.add(listener);
    return () => {
      this.listeners.delete(listener);
    };
  }

  notify() {
    this.listeners.forEach(l => l());
  }
}
