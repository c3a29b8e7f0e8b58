// The demo rack's power channel: Redfish over the rack's BMCs (sushy-tools).
// Builds, from what the running rack reports (connectRack(dir).redfish and
// .machines), the objects a deployment would write:
//   - Secret rackside-system/bmc-credentials (username, password)
//   - Secret rackside-system/bmc-ca (ca.crt: the CA that signed the BMCs' certificate)
//   - one ServerBMC per node whose machine has a BMC (name = node name)
//   - the PowerProvider `default`, type redfish, reading those Secrets
// The operator's role (e2e/rack/demo/operator-access.yaml) reads the Secrets
// by name. Plain ESM, no npm dependencies.
import fs from 'node:fs';

export const POWER_NAMESPACE = 'rackside-system';
export const CREDENTIALS_SECRET = 'bmc-credentials';
export const CA_SECRET = 'bmc-ca';

const API = 'rackside.dev/v1alpha1';

const base64 = text => Buffer.from(text, 'utf8').toString('base64');

/**
 * The manifests of the demo's power channel, or `undefined` when the rack runs
 * without BMCs (`--no-redfish`): then no PowerProvider is written and the
 * portal offers no power verb, as a deployment without one would.
 * Throws, naming what is missing, when the rack's Redfish part is incomplete.
 */
export function demoPowerManifests(rack) {
  const redfish = rack.redfish;
  if (!redfish) return undefined;
  for (const key of ['url', 'caFile', 'username', 'password']) {
    if (!redfish[key]) {
      throw new Error(
        `the rack's redfish part has no ${key}: cannot set up the demo power channel`,
      );
    }
  }
  const systemOf = machine =>
    redfish.systemsByUuid?.[machine.uuid] ?? redfish.systems?.[machine.node];
  const bmcNodes = (rack.machines ?? []).filter(
    m => m.kind === 'node' && m.bmc && m.node,
  );
  const missing = bmcNodes.filter(m => !systemOf(m)).map(m => m.node);
  if (missing.length) {
    throw new Error(
      `no Redfish system for ${missing.join(
        ', ',
      )}: the rack's BMCs and machines disagree`,
    );
  }
  const secret = (name, data) => ({
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace: POWER_NAMESPACE },
    type: 'Opaque',
    data: Object.fromEntries(
      Object.entries(data).map(([k, v]) => [k, base64(v)]),
    ),
  });
  return [
    secret(CREDENTIALS_SECRET, {
      username: redfish.username,
      password: redfish.password,
    }),
    secret(CA_SECRET, { 'ca.crt': fs.readFileSync(redfish.caFile, 'utf8') }),
    ...bmcNodes.map(m => ({
      apiVersion: API,
      kind: 'ServerBMC',
      metadata: { name: m.node },
      spec: { address: redfish.url, systemPath: systemOf(m) },
    })),
    {
      apiVersion: API,
      kind: 'PowerProvider',
      metadata: { name: 'default' },
      spec: {
        type: 'redfish',
        attendedRack: false,
        redfish: {
          credentialsSecretRef: {
            namespace: POWER_NAMESPACE,
            name: CREDENTIALS_SECRET,
            usernameKey: 'username',
            passwordKey: 'password',
          },
          caBundleRef: {
            kind: 'Secret',
            namespace: POWER_NAMESPACE,
            name: CA_SECRET,
            key: 'ca.crt',
          },
          insecureSkipVerify: false,
          readbackWindowSeconds: 60,
          readbackIntervalSeconds: 2,
        },
      },
    },
  ];
}

/** The nodes that get a ServerBMC (for the log line). */
export function bmcNodeNames(manifests) {
  return manifests
    .filter(m => m.kind === 'ServerBMC')
    .map(m => m.metadata.name);
}
