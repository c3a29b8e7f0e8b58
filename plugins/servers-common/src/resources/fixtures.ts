import {
  credentialSecretName,
  type MachineReclaimInput,
} from './machineReclaim';
import type { NodeMaintenanceInput } from './nodeMaintenance';
import type { PowerProviderInput } from './powerProvider';
import type { ServerBMCInput } from './serverBmc';
import type { TalosClusterInput } from './talosCluster';
import type { TalosMachineInput } from './talosMachine';
import { RACKSIDE_API_VERSION } from './common';

/** Valid example objects of every kind, as a client writes them (unit tests only). */
export const examples = {
  nodeMaintenance(name = 'worker-1-drain'): NodeMaintenanceInput {
    return {
      apiVersion: RACKSIDE_API_VERSION,
      kind: 'NodeMaintenance',
      metadata: { name },
      spec: {
        nodeName: 'worker-1',
        intent: 'drain',
        reason: 'Replace a failed DIMM',
        requestedBy: 'user:default/jane',
        preflight: {
          takenAt: '2026-08-04T10:00:00Z',
          token: 'v1.abc',
          ceremony: 'preflight',
          pods: [{ namespace: 'shop', name: 'payments-7c9f-abcde' }],
          blockingPDBs: [{ namespace: 'shop', name: 'payments' }],
          quorum: { members: 3, quorum: 2, ready: 3, margin: 1 },
        },
        drain: { timeoutSeconds: 600 },
      },
    };
  },
  powerProvider(name = 'default'): PowerProviderInput {
    return {
      apiVersion: RACKSIDE_API_VERSION,
      kind: 'PowerProvider',
      metadata: { name },
      spec: {
        type: 'redfish',
        redfish: {
          credentialsSecretRef: { namespace: 'rackside', name: 'bmc' },
          caBundleRef: { name: 'bmc-ca' },
        },
      },
    };
  },
  serverBmc(name = 'worker-1'): ServerBMCInput {
    return {
      apiVersion: RACKSIDE_API_VERSION,
      kind: 'ServerBMC',
      metadata: { name },
      spec: {
        address: 'https://127.0.0.1:8443',
        systemPath: '/redfish/v1/Systems/4c4c4544-0031-3810-8044-b1c04f4d3232',
      },
    };
  },
  talosCluster(name = 'plant-a', namespace = 'rackside'): TalosClusterInput {
    return {
      apiVersion: RACKSIDE_API_VERSION,
      kind: 'TalosCluster',
      metadata: { name, namespace },
      spec: {
        discovery: { addresses: ['127.0.10.21', '127.0.10.22'] },
        joinConfigSecretRef: { name: 'plant-a-join' },
        talosconfigSecretRef: { name: 'plant-a-talosconfig' },
      },
    };
  },
  talosMachine(
    name = '4c4c4544-0031-3810-8044-b1c04f4d3232',
    namespace = 'rackside',
  ): TalosMachineInput {
    return {
      apiVersion: RACKSIDE_API_VERSION,
      kind: 'TalosMachine',
      metadata: { name, namespace },
      spec: { cluster: 'plant-a' },
    };
  },
  machineReclaim(
    name = 'reclaim-x7k2p',
    namespace = 'rackside',
  ): MachineReclaimInput {
    return {
      apiVersion: RACKSIDE_API_VERSION,
      kind: 'MachineReclaim',
      metadata: { name, namespace },
      spec: {
        address: '127.0.10.31',
        targetCluster: 'plant-a',
        credentialSecretRef: { name: credentialSecretName(name) },
        requestedBy: 'user:default/jane',
        reason: 'Move the old line-3 controller into plant-a',
      },
    };
  },
};
