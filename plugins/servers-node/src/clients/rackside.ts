import type { KubeConfig } from '@kubernetes/client-node';
import {
  RACKSIDE_RESOURCES,
  type MachineReclaim,
  type MachineReclaimInput,
  type MaintenancePlan,
  type MaintenancePlanInput,
  type NodeMaintenance,
  type NodeMaintenanceInput,
  type PowerProvider,
  type PowerProviderInput,
  type ServerBMC,
  type ServerBMCInput,
  type TalosCluster,
  type TalosClusterInput,
  type TalosMachine,
  type TalosMachineInput,
} from '@rackside/plugin-servers-common';
import { KubeHttp } from './kubeHttp';
import { ResourceClient, ResourceClientOptions } from './ResourceClient';

/**
 * Typed clients for Rackside's custom resources (group `rackside.dev`), one
 * per kind. Answers are typed with the zod output types of
 * `@rackside/plugin-servers-common`, writes with its input types; nothing is
 * parsed here (parse with the schemas where an untrusted shape matters; the
 * apiserver's structural schema already rejects what the CRD forbids).
 */
export class RacksideClient {
  readonly nodeMaintenances: ResourceClient<
    NodeMaintenance,
    NodeMaintenanceInput
  >;
  readonly powerProviders: ResourceClient<PowerProvider, PowerProviderInput>;
  readonly serverBmcs: ResourceClient<ServerBMC, ServerBMCInput>;
  readonly talosClusters: ResourceClient<TalosCluster, TalosClusterInput>;
  readonly talosMachines: ResourceClient<TalosMachine, TalosMachineInput>;
  readonly machineReclaims: ResourceClient<MachineReclaim, MachineReclaimInput>;
  readonly maintenancePlans: ResourceClient<
    MaintenancePlan,
    MaintenancePlanInput
  >;

  constructor(
    kubeConfig: KubeConfig | KubeHttp,
    options: ResourceClientOptions = {},
  ) {
    const http =
      kubeConfig instanceof KubeHttp
        ? kubeConfig
        : new KubeHttp(kubeConfig, { timeoutMs: options.timeoutMs });
    const r = RACKSIDE_RESOURCES;
    this.nodeMaintenances = new ResourceClient(
      http,
      r.NodeMaintenance,
      options,
    );
    this.powerProviders = new ResourceClient(http, r.PowerProvider, options);
    this.serverBmcs = new ResourceClient(http, r.ServerBMC, options);
    this.talosClusters = new ResourceClient(http, r.TalosCluster, options);
    this.talosMachines = new ResourceClient(http, r.TalosMachine, options);
    this.machineReclaims = new ResourceClient(http, r.MachineReclaim, options);
    this.maintenancePlans = new ResourceClient(
      http,
      r.MaintenancePlan,
      options,
    );
  }
}
