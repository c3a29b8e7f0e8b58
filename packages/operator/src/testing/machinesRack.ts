/*
 * Helpers of the discovery, join and reclaim rack tests, on top of startOperatorRack():
 * the Talos emulator's machines and control API, Secrets, the TalosCluster, the webhook
 * registration, kubectl as another user, and waits on the new kinds.
 */
import {
  isTerminalReclaimPhase,
  machineReclaimResource,
  talosClusterResource,
  type MachineReclaim,
  type TalosCluster,
  type TalosMachine,
} from '@rackside/plugin-servers-common';
import {
  RacksideClient,
  ResourceClient,
  TalosApiClient,
} from '@rackside/plugin-servers-node';
import { talosEmulator, type RackMachine } from '@rackside/rack-testing';
import { spawn } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import type { OperatorRack } from './operatorRack';
import {
  ADMIN_USER,
  eventReasonsOf,
  OPERATOR_NAMESPACE as NS,
} from './operatorRack';

export type { RackMachine, RackTalos } from '@rackside/rack-testing';

/** The join config of the rack's cluster: a worker of plant-a (the emulator reads clusterName). */
export const PLANT_A_JOIN_CONFIG = [
  'version: v1alpha1',
  'machine:',
  '  type: worker',
  'cluster:',
  '  clusterName: plant-a',
  '',
].join('\n');

export function machinesRack(env: OperatorRack) {
  const emulator = talosEmulator(env.rack.info);
  const { talos, machines, control } = emulator;
  const api = new RacksideClient(env.admin);
  /** The emulator's log lines about one machine, shown when a reclaim ends otherwise than awaited. */
  const emulatorLog = (uuid: string | undefined) => {
    const file = path.join(env.rack.info.dir, 'logs', 'talosemu.log');
    if (!uuid || !fs.existsSync(file)) return '(no emulator log)';
    const lines = fs
      .readFileSync(file, 'utf8')
      .split('\n')
      .filter(line => line.toLowerCase().includes(uuid.toLowerCase()));
    return `emulator log of ${uuid}:\n${lines.slice(-30).join('\n')}`;
  };

  return {
    talos,
    machines,
    api,
    spares: machines.filter(m => m.kind === 'spare'),
    foreign: machines.filter(m => m.kind === 'foreign'),
    byNode: emulator.byNode,
    talosconfig: emulator.talosconfig,
    /** Powers a machine on or off behind the operator's back. */
    power: emulator.powerMachine,
    /** An address on the rack's network no machine holds. */
    unusedAddress: (host: number) =>
      machines[0].address.replace(/\.\d+$/, `.${host}`),
    counts: async (uuid: string): Promise<Record<string, number | undefined>> =>
      (await emulator.allCounts())[uuid] ?? {},
    emulated: (uuid: string) =>
      control<{
        mode: string;
        cluster?: string;
        address: string;
        state: string;
      }>(`/machines/${uuid}`),
    /** The address the machine takes at its next reset (a new DHCP lease). */
    resetAddress: (uuid: string, host: number) =>
      control(`/machines/${uuid}/reset-address`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ host }),
      }),

    secret: env.secret,
    /**
     * The Secrets a TalosCluster of plant-a refers to (createCluster): plant-a's
     * talosconfig and its join config (PLANT_A_JOIN_CONFIG).
     */
    async createClusterSecrets() {
      await env.secret('plant-a-talosconfig', {
        talosconfig: emulator.talosconfig('plant-a'),
      });
      await env.secret('plant-a-join', { 'config.yaml': PLANT_A_JOIN_CONFIG });
    },
    async secretExists(name: string) {
      try {
        await env.core.readNamespacedSecret({ namespace: NS, name });
        return true;
      } catch (error) {
        if ((error as { code?: number }).code === 404) return false;
        throw error;
      }
    },

    /** The rack's machine network (127.0.<10+net>.0/24): what the deployer would allow. */
    machineNetwork: () => machines[0].address.replace(/\.\d+$/, '.0/24'),

    async createCluster(
      addresses: string[],
      intervalSeconds = 300,
      allowedNetworks = [machines[0].address.replace(/\.\d+$/, '.0/24')],
    ) {
      return api.talosClusters.create({
        apiVersion: talosClusterResource.apiVersion,
        kind: 'TalosCluster',
        metadata: { name: 'plant-a', namespace: NS },
        spec: {
          discovery: { allowedNetworks, addresses, intervalSeconds },
          joinConfigSecretRef: { name: 'plant-a-join', key: 'config.yaml' },
          talosconfigSecretRef: {
            name: 'plant-a-talosconfig',
            key: 'talosconfig',
          },
        },
      });
    },
    cluster: () => api.talosClusters.get('plant-a', { namespace: NS }),

    /** Makes a spare in maintenance mode a machine of another Talos cluster (as if it had joined it). */
    async joinForeign(address: string, cluster: string, role = 'worker') {
      const client = new TalosApiClient(address, { mode: 'maintenance' });
      try {
        await client.applyConfiguration(
          `version: v1alpha1\nmachine:\n  type: ${role}\ncluster:\n  clusterName: ${cluster}\n`,
        );
      } finally {
        client.close();
      }
    },
    /**
     * Makes a spare a running machine of another Talos cluster (joinForeign) and waits
     * until the emulator shows it so; a timeout says what the emulator showed.
     */
    async joinForeignRunning(
      machine: RackMachine,
      cluster: string,
      role = 'worker',
    ) {
      await this.joinForeign(machine.address, cluster, role);
      await env.waitFor(
        `${machine.uuid} a running ${role} of ${cluster}`,
        async () => {
          const m = await this.emulated(machine.uuid);
          if (
            m.mode === 'configured' &&
            m.cluster === cluster &&
            m.state === 'running'
          )
            return true;
          throw new Error(`the emulator shows ${JSON.stringify(m)}`);
        },
      );
    },

    machine: (uuid: string) => api.talosMachines.find(uuid, { namespace: NS }),
    async machinePhase(uuid: string, phase: string, timeoutMs = 60_000) {
      return env.waitFor<TalosMachine>(
        `TalosMachine ${uuid} in ${phase}`,
        async () => {
          const tm = await api.talosMachines.find(uuid, { namespace: NS });
          return tm?.status?.phase === phase && tm;
        },
        timeoutMs,
      );
    },

    reclaims: api.machineReclaims,
    async createReclaim(
      name: string,
      address: string,
      spec: Partial<MachineReclaim['spec']> = {},
    ) {
      return api.machineReclaims.create({
        apiVersion: machineReclaimResource.apiVersion,
        kind: 'MachineReclaim',
        metadata: { name, namespace: NS },
        spec: {
          address,
          targetCluster: 'plant-a',
          credentialSecretRef: {
            name: `${name}-talosconfig`,
            key: 'talosconfig',
          },
          requestedBy: ADMIN_USER,
          reason: 'rack test',
          ...spec,
        },
      });
    },
    reclaim: (name: string) => api.machineReclaims.get(name, { namespace: NS }),
    async reclaimPhase(name: string, phase: string, timeoutMs = 60_000) {
      // A request that ended in another phase will not reach this one: say so at once,
      // with its result, instead of waiting out the timeout.
      const mr = await env.waitFor<MachineReclaim>(
        `MachineReclaim ${name} in ${phase}`,
        async () => {
          const got = await api.machineReclaims.get(name, { namespace: NS });
          const seen = got.status?.phase ?? '(no phase)';
          if (
            seen === phase ||
            (got.status?.phase && isTerminalReclaimPhase(got.status.phase))
          )
            return got;
          throw new Error(
            `${name} is ${seen}: ${
              got.status?.audit?.at(-1)?.message ?? 'no audit entry yet'
            }`,
          );
        },
        timeoutMs,
      );
      if (mr.status?.phase !== phase) {
        throw new Error(
          `MachineReclaim ${name} ended ${mr.status?.phase}, not ${phase}: ${
            mr.status?.result ?? mr.status?.audit?.at(-1)?.message
          }\naudit:\n${(mr.status?.audit ?? [])
            .map(a => `  ${a.at} ${a.event}: ${a.message}`)
            .join('\n')}\n${emulatorLog(mr.status?.machineUUID)}`,
        );
      }
      return mr;
    },

    /** The backend's part of a reclaim: append the address, recorded in the annotation. */
    async appendReclaimAddress(address: string, attempts = 5): Promise<void> {
      const cluster = await api.talosClusters.get('plant-a', { namespace: NS });
      const recorded =
        cluster.metadata.annotations?.['rackside.dev/reclaim-added-addresses'];
      const patch = api.talosClusters.patch(
        'plant-a',
        {
          metadata: {
            resourceVersion: cluster.metadata.resourceVersion,
            annotations: {
              'rackside.dev/reclaim-added-addresses': recorded
                ? `${recorded},${address}`
                : address,
            },
          },
          spec: {
            discovery: {
              addresses: [
                ...(cluster.spec.discovery?.addresses ?? []),
                address,
              ],
            },
          },
        } as any,
        { namespace: NS, type: 'merge' },
      );
      try {
        await patch;
      } catch (error) {
        // Another writer got there first: read again, as the backend does.
        if (attempts <= 1 || !/conflict|modified/i.test(String(error)))
          throw error;
        await this.appendReclaimAddress(address, attempts - 1);
      }
    },

    /** As OperatorRack's: with `awaiting`, once each of those is recorded. */
    eventReasons(name: string, awaiting?: string[]) {
      return eventReasonsOf(
        async () =>
          (
            await env.core.listNamespacedEvent({
              namespace: NS,
              fieldSelector: `involvedObject.name=${name}`,
            })
          ).items.map(e => e.reason ?? ''),
        name,
        awaiting,
        env.waitFor,
      );
    },

    /** Registers the operator's webhook with the apiserver for MachineReclaim create/update. */
    async registerWebhook(port: number, caPem: string) {
      const configs = new ResourceClient<any>(env.admin, {
        group: 'admissionregistration.k8s.io',
        version: 'v1',
        plural: 'validatingwebhookconfigurations',
        kind: 'ValidatingWebhookConfiguration',
        namespaced: false,
      });
      await configs.create({
        apiVersion: 'admissionregistration.k8s.io/v1',
        kind: 'ValidatingWebhookConfiguration',
        metadata: { name: 'rackside-machinereclaims' },
        webhooks: [
          {
            name: 'machinereclaims.rackside.dev',
            clientConfig: {
              url: `https://127.0.0.1:${port}/validate-machinereclaims`,
              caBundle: Buffer.from(caPem).toString('base64'),
            },
            rules: [
              {
                apiGroups: ['rackside.dev'],
                apiVersions: ['v1alpha1'],
                operations: ['CREATE', 'UPDATE'],
                resources: ['machinereclaims'],
                scope: 'Namespaced',
              },
            ],
            failurePolicy: 'Fail',
            sideEffects: 'None',
            admissionReviewVersions: ['v1'],
            timeoutSeconds: 10,
          },
        ],
      });
    },

    /** A ServiceAccount in the operator's namespace with exactly these rules there, and a kubeconfig file for it. */
    async userWithRules(
      name: string,
      rules: Array<{
        apiGroups: string[];
        resources: string[];
        verbs: string[];
      }>,
    ) {
      await env.core.createNamespacedServiceAccount({
        namespace: NS,
        body: { metadata: { name } },
      });
      const rbac = (kind: string, plural: string) =>
        new ResourceClient<any>(env.admin, {
          group: 'rbac.authorization.k8s.io',
          version: 'v1',
          plural,
          kind,
          namespaced: true,
        });
      await rbac('Role', 'roles').create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'Role',
        metadata: { name, namespace: NS },
        rules,
      });
      await rbac('RoleBinding', 'rolebindings').create({
        apiVersion: 'rbac.authorization.k8s.io/v1',
        kind: 'RoleBinding',
        metadata: { name, namespace: NS },
        roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name },
        subjects: [{ kind: 'ServiceAccount', name, namespace: NS }],
      });
      const token = await env.core.createNamespacedServiceAccountToken({
        namespace: NS,
        name,
        body: { spec: { audiences: [], expirationSeconds: 3600 } },
      });
      const file = path.join(
        fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-kubeconfig-')),
        'config',
      );
      fs.writeFileSync(
        file,
        JSON.stringify({
          apiVersion: 'v1',
          kind: 'Config',
          clusters: [
            {
              name: 'rack',
              cluster: {
                server: env.rack.info.server,
                'certificate-authority': env.rack.info.caFile,
              },
            },
          ],
          users: [{ name, user: { token: token.status!.token } }],
          contexts: [
            { name: 'rack', context: { cluster: 'rack', user: name } },
          ],
          'current-context': 'rack',
        }),
      );
      return {
        kubeconfig: file,
        kubeConfig: env.rack.tokenKubeConfig(token.status!.token!),
        username: `system:serviceaccount:${NS}:${name}`,
      };
    },
  };
}

/** The rack's kubectl. */
export function kubectlPath(): string {
  const cache =
    process.env.RACKSIDE_CACHE ?? path.join(os.homedir(), '.cache', 'rackside');
  const versions = fs
    .readdirSync(path.join(cache, 'bin'))
    .filter(d => d.startsWith('k8s-'));
  if (versions.length === 0)
    throw new Error(`no k8s binaries under ${cache}/bin`);
  return path.join(cache, 'bin', versions.sort().pop()!, 'kubectl');
}

/** Runs kubectl with a kubeconfig, feeding `stdin`; resolves with the exit code and output. */
export function kubectl(
  kubeconfig: string,
  args: string[],
  stdin?: string,
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve, reject) => {
    const child = spawn(kubectlPath(), ['--kubeconfig', kubeconfig, ...args], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', d => (stdout += d));
    child.stderr.on('data', d => (stderr += d));
    child.on('error', reject);
    child.on('close', code => resolve({ code: code ?? -1, stdout, stderr }));
    child.stdin.end(stdin ?? '');
  });
}

export type { TalosCluster };
