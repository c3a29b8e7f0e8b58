/*
 * Helpers of the power rack tests (reboot, shutdown, power-on; the send-time guard; the
 * plans), on top of startOperatorRack(): the Talos emulator's machines, counts and power
 * switch, the Secrets a PowerProvider refers to, and the PowerProvider itself.
 */
import {
  POWER_PROVIDER_NAME,
  powerProviderResource,
  serverBmcResource,
  type PowerProvider,
} from '@rackside/plugin-servers-common';
import { ResourceClient } from '@rackside/plugin-servers-node';
import { talosEmulator, type RackRedfish } from '@rackside/rack-testing';
import fs from 'node:fs';
import type { OperatorRack } from './operatorRack';

/** The Secret and key of plant-a's talosconfig, as a PowerProvider or TalosCluster names it. */
export const PLANT_A_TALOSCONFIG = {
  name: 'plant-a-talosconfig',
  key: 'talosconfig',
};

/** The Talos power channel of plant-a, without the attendedRack promise. */
export const TALOS_PROVIDER: PowerProvider['spec'] = {
  type: 'talos',
  attendedRack: false,
  talos: { secretRef: PLANT_A_TALOSCONFIG },
};

/**
 * The Redfish power channel over the rack's BMCs (the Secrets createPowerSecrets makes),
 * read back every second for a minute.
 */
export const REDFISH_PROVIDER: PowerProvider['spec'] = {
  type: 'redfish',
  attendedRack: false,
  redfish: {
    credentialsSecretRef: {
      name: 'bmc-credentials',
      usernameKey: 'username',
      passwordKey: 'password',
    },
    caBundleRef: { kind: 'Secret', name: 'bmc-ca', key: 'ca.crt' },
    insecureSkipVerify: false,
    readbackWindowSeconds: 60,
    readbackIntervalSeconds: 1,
  },
};

export function powerRack(env: OperatorRack) {
  const emulator = talosEmulator(env.rack.info);
  const providers = new ResourceClient<PowerProvider>(
    env.admin,
    powerProviderResource,
  );
  const redfish = env.rack.info.redfish as RackRedfish | undefined;
  const bmcs = new ResourceClient<any>(env.admin, serverBmcResource);
  const writeProvider = async (spec: PowerProvider['spec']) => {
    const existing = await providers.find(POWER_PROVIDER_NAME);
    return existing
      ? providers.update({ ...existing, spec })
      : providers.create({
          apiVersion: powerProviderResource.apiVersion,
          kind: 'PowerProvider',
          metadata: { name: POWER_PROVIDER_NAME },
          spec,
        } as PowerProvider);
  };

  return {
    ...emulator,
    providers,
    /** The rack's BMCs (a rack started withRedfish). */
    get redfish(): RackRedfish {
      if (!redfish) throw new Error('the rack was started without Redfish');
      return redfish;
    },
    /**
     * The Secrets the PowerProviders of these tests refer to: plant-a's talosconfig
     * (PLANT_A_TALOSCONFIG), and on a rack with BMCs their credentials (bmc-credentials)
     * and CA (bmc-ca).
     */
    async createPowerSecrets() {
      await env.secret(PLANT_A_TALOSCONFIG.name, {
        [PLANT_A_TALOSCONFIG.key]: emulator.talosconfig('plant-a'),
      });
      if (!redfish) return;
      await env.secret('bmc-credentials', {
        username: redfish.username,
        password: redfish.password,
      });
      await env.secret('bmc-ca', {
        'ca.crt': fs.readFileSync(redfish.caFile, 'utf8'),
      });
    },
    bmcs,
    /** A ServerBMC for the node: the rack's BMC system of its machine. */
    async linkBmc(node: string) {
      if (!redfish) throw new Error('the rack was started without Redfish');
      await bmcs.create({
        apiVersion: serverBmcResource.apiVersion,
        kind: 'ServerBMC',
        metadata: { name: node },
        spec: {
          address: redfish.url,
          systemPath: redfish.systemsByUuid[emulator.uuidOf(node)],
        },
      });
    },
    /** Waits until the operator has reconciled the node's ServerBMC (Ready True), and answers it. */
    bmcReconciled: (node: string) =>
      env.waitFor(`ServerBMC ${node} reconciled`, async () => {
        const got = await bmcs.get(node);
        return got.status?.conditions?.[0]?.status === 'True' && got;
      }),
    /** Creates or updates the PowerProvider with this spec (no operator needs to run). */
    writeProvider,
    /** Sets the PowerProvider and waits until the operator advertises for this spec. */
    async provide(spec: PowerProvider['spec']) {
      const written = await writeProvider(spec);
      return env.waitFor('PowerProvider status for this spec', async () => {
        const got = await providers.get(POWER_PROVIDER_NAME);
        return (
          got.status?.observedGeneration === written.metadata.generation && got
        );
      });
    },
  };
}
