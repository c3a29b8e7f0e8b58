// The demo rack's Add node setup: the TalosCluster `plant-a` the operator
// discovers machines for and adds them to. Builds, from what the running rack
// reports (connectRack(dir).talos and .machines), the objects a deployment
// would write:
//   - Secret rackside-system/plant-a-talosconfig (talosconfig: plant-a's admin
//     talosconfig, which the emulator wrote; discovery tells a Member by it)
//   - Secret rackside-system/plant-a-join (config.yaml: the machine config a
//     new worker gets)
//   - TalosCluster rackside-system/plant-a, discovering the rack's spare
//     machines (maintenance mode: Add) and the machines of the foreign cluster
//     plant-old (AlreadyConfigured: Reset and add), allowed to reach the rack's
//     machine network only (127.0.<10+net>.0/24, Talos port 50000)
// The operator's role reads the Secrets by name. Plain ESM, no npm dependencies.
import fs from 'node:fs';

export const MACHINES_NAMESPACE = 'rackside-system';
export const TALOS_CLUSTER = 'plant-a';

const API = 'rackside.dev/v1alpha1';

const base64 = text => Buffer.from(text, 'utf8').toString('base64');

/** What a new worker of plant-a is configured with (the emulator reads the cluster name). */
export const DEMO_JOIN_CONFIG = [
  'version: v1alpha1',
  'machine:',
  '  type: worker',
  'cluster:',
  `  clusterName: ${TALOS_CLUSTER}`,
  '',
].join('\n');

/**
 * The manifests of the demo's TalosCluster, or `undefined` when the rack runs
 * without its Talos emulator (`--no-talos`): then the Add node page says there
 * is no TalosCluster, as a deployment without one would.
 */
export function demoMachineManifests(rack) {
  const talosconfigFile = rack.talos?.talosconfigs?.[TALOS_CLUSTER];
  if (!talosconfigFile) return undefined;
  const addresses = (rack.machines ?? [])
    .filter(m => m.kind === 'spare' || m.kind === 'foreign')
    .map(m => m.address);
  // The rack's machine network only (127.0.<10+net>.0/24), as a deployer would write it:
  // not 127.0.0.1, where the apiserver and the BMCs listen.
  const allowedNetworks = [
    ...new Set(
      (rack.machines ?? []).map(m => m.address.replace(/\.\d+$/, '.0/24')),
    ),
  ];
  const secret = (name, data) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: MACHINES_NAMESPACE },
    type: 'Opaque',
    data: Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, base64(v)]),
    ),
  });
  return [
    secret(`${TALOS_CLUSTER}-talosconfig`, {
      talosconfig: fs.readFileSync(talosconfigFile, 'utf8'),
    }),
    secret(`${TALOS_CLUSTER}-join`, { 'config.yaml': DEMO_JOIN_CONFIG }),
    {
      apiVersion: API,
      kind: 'TalosCluster',
      metadata: { name: TALOS_CLUSTER, namespace: MACHINES_NAMESPACE },
      spec: {
        discovery: {
          allowedNetworks,
          talosPort: 50000,
          addresses,
          intervalSeconds: 300,
        },
        joinConfigSecretRef: { name: `${TALOS_CLUSTER}-join` },
        talosconfigSecretRef: { name: `${TALOS_CLUSTER}-talosconfig` },
      },
    },
  ];
}
