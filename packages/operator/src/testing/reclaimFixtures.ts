/* Test fixtures of the reclaim and discovery tables: objects and a scriptable Talos fake. */
import type {
  MachineReclaim,
  MachineReclaimSpec,
  MachineReclaimStatus,
  TalosCluster,
} from '@rackside/plugin-servers-common';
import type {
  TalosEtcdMember,
  TalosProbeResult,
} from '@rackside/plugin-servers-node';
import type { TalosAccess } from '../talos/talosAccess';

export const NS = 'rackside-system';
export const CREATED = '2026-10-30T03:00:00.000Z';
export const UUID = '71c86230-0000-4000-8000-000000000001';

export function reclaimObject(
  status?: Partial<MachineReclaimStatus>,
  spec: Partial<MachineReclaimSpec> = {},
): MachineReclaim {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MachineReclaim',
    metadata: {
      name: 'reclaim-1',
      namespace: NS,
      uid: 'uid-1',
      generation: 1,
      resourceVersion: '1',
      creationTimestamp: CREATED,
    },
    spec: {
      address: '10.0.2.191',
      targetCluster: 'plant-a',
      credentialSecretRef: {
        name: 'reclaim-1-talosconfig',
        key: 'talosconfig',
      },
      ttlMinutes: 15,
      requestedBy: 'user:default/admin',
      reason: 'reuse the old worker',
      ...spec,
    },
    status: status as MachineReclaimStatus | undefined,
  };
}

export function talosClusterObject(
  discovery: Partial<NonNullable<TalosCluster['spec']['discovery']>> = {},
): TalosCluster {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'TalosCluster',
    metadata: {
      name: 'plant-a',
      namespace: NS,
      generation: 1,
      resourceVersion: '3',
    },
    spec: {
      discovery: {
        allowedNetworks: ['10.0.3.0/24'],
        talosPort: 50000,
        addresses: [],
        intervalSeconds: 300,
        ...discovery,
      },
      joinConfigSecretRef: { name: 'plant-a-join', key: 'config.yaml' },
      talosconfigSecretRef: { name: 'plant-a-talosconfig', key: 'talosconfig' },
    },
  };
}

export const etcdMember = (ip: string): TalosEtcdMember => ({
  id: ip,
  hostname: `cp-${ip}`,
  peerUrls: [`https://${ip}:2380`],
  clientUrls: [`https://${ip}:2379`],
  isLearner: false,
});

/** One machine as the fake Talos API answers for it. */
export interface FakeMachine {
  probe?: TalosProbeResult;
  uuid?: string | Error;
  maintenanceUUID?: string | Error;
  etcd?: TalosEtcdMember[] | Error;
  reset?: { actorId: string } | Error;
  apply?: { mode: string; modeDetails: string; warnings: string[] } | Error;
}

/** A Talos API fake: per-address answers, every call recorded with its timeout. */
export function fakeTalos(machines: Record<string, FakeMachine>) {
  const calls: Array<{ call: string; address: string; timeoutMs: number }> = [];
  const machine = (address: string) => {
    const m = machines[address];
    if (!m) throw new Error(`no machine at ${address}`);
    return m;
  };
  const answer = async <T>(value: T | Error | undefined, what: string) => {
    if (value instanceof Error) throw value;
    if (value === undefined) throw new Error(`${what}: unreachable`);
    return value;
  };
  const access: TalosAccess = {
    async probe(address, { timeoutMs }) {
      calls.push({ call: 'probe', address, timeoutMs });
      return (
        machines[address]?.probe ?? { mode: 'unreachable', reason: 'no route' }
      );
    },
    async maintenanceUUID(address, timeoutMs) {
      calls.push({ call: 'maintenanceUUID', address, timeoutMs });
      return answer(machine(address).maintenanceUUID, address);
    },
    async uuid(address, _identity, timeoutMs) {
      calls.push({ call: 'uuid', address, timeoutMs });
      return answer(machine(address).uuid, address);
    },
    async etcdMembers(address, _identity, timeoutMs) {
      calls.push({ call: 'etcdMembers', address, timeoutMs });
      return answer(machines[address]?.etcd, address);
    },
    async reset(address, _identity, timeoutMs) {
      calls.push({ call: 'reset', address, timeoutMs });
      return answer(machine(address).reset, address);
    },
    async applyConfiguration(address, _config, timeoutMs) {
      calls.push({ call: 'apply', address, timeoutMs });
      return answer(machine(address).apply, address);
    },
  };
  return { access, calls, machines };
}
