/*
 * The credential of a reclaim is bound to its request, and the operator is authoritative
 * when it sends the Reset (issue 15, DESIGN 5b), on the simulated rack: requests written
 * with kubectl instead of the backend, Secrets the request did not get from the backend,
 * machines of this cluster, and a foreign etcd member that goes down between the
 * confirmation and the reset. The backend's part (request, then its Secret) is played by
 * the test with the shape the backend writes.
 */
import {
  CREDENTIAL_OF_LABEL,
  credentialSecretName,
  type MachineReclaim,
} from '@rackside/plugin-servers-common';
import { startTrap, type Trap } from '@rackside/rack-testing';
import net from 'node:net';
import { parse, stringify } from 'yaml';
import type { Operator } from './operator';
import {
  ADMIN_USER,
  OPERATOR_NAMESPACE as NS,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';
import {
  kubectl,
  machinesRack,
  type RackMachine,
} from './testing/machinesRack';

jest.setTimeout(120_000);

let env: OperatorRack;
let rack: ReturnType<typeof machinesRack>;
let operator: Operator | undefined;
let requester: Awaited<ReturnType<typeof rack.userWithRules>>;
/** A TCP server outside the rack's machine network that counts the connections it gets. */
let trap: Trap;

const reclaimYaml = (
  name: string,
  address: string,
  spec: Record<string, unknown> = {},
) =>
  stringify({
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MachineReclaim',
    metadata: { name, namespace: NS },
    spec: {
      address,
      targetCluster: 'plant-a',
      credentialSecretRef: { name: credentialSecretName(name) },
      reason: 'kubectl test',
      // The writer's own name, as the chart's policies require: the requester's.
      requestedBy: requester.username,
      ...spec,
    },
  });

async function kubectlCreate(yaml: string) {
  return kubectl(requester.kubeconfig, ['create', '-f', '-'], yaml);
}

/** The credential Secret as the backend writes it: owned by the request, labelled, immutable. */
async function boundSecret(mr: MachineReclaim, talosconfig: string) {
  await env.core.createNamespacedSecret({
    namespace: NS,
    body: {
      metadata: {
        name: credentialSecretName(mr.metadata.name),
        namespace: NS,
        labels: { [CREDENTIAL_OF_LABEL]: mr.metadata.name },
        ownerReferences: [
          {
            apiVersion: 'rackside.dev/v1alpha1',
            kind: 'MachineReclaim',
            name: mr.metadata.name,
            uid: mr.metadata.uid!,
            controller: true,
          },
        ],
      },
      immutable: true,
      stringData: { talosconfig },
    },
  });
}

/** A Secret as it is now, data decoded. */
async function secretNow(name: string) {
  const s = await env.core.readNamespacedSecret({ namespace: NS, name });
  return {
    uid: s.metadata?.uid,
    resourceVersion: s.metadata?.resourceVersion,
    talosconfig: Buffer.from(s.data?.talosconfig ?? '', 'base64').toString(
      'utf8',
    ),
  };
}

const auditEvents = (mr: MachineReclaim) =>
  (mr.status?.audit ?? []).map(a => a.event);

/** Makes a spare in maintenance mode a running machine of plant-old with that role. */
const joinPlantOld = (machine: RackMachine, role: string) =>
  rack.joinForeignRunning(machine, 'plant-old', role);

const power = (uuid: string, state: 'on' | 'off') => rack.power(uuid, state);

const foreignWorker = () => rack.foreign.find(m => m.role === 'worker')!;

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: false,
  });
  rack = machinesRack(env);
  // Loopback, but outside 127.0.<10+net>.0/24, on the Talos port: what a call would hit.
  trap = await startTrap(env.rack.info);
  await rack.createClusterSecrets();
  await rack.createCluster([], 300);
  requester = await rack.userWithRules('requester', [
    {
      apiGroups: ['rackside.dev'],
      resources: ['machinereclaims'],
      verbs: ['create', 'get', 'list', 'watch', 'update', 'patch'],
    },
  ]);
  operator = await env.startReady({
    machines: { reclaim: { maintenanceWaitMs: 25_000 } },
  });
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await trap?.close();
  await env?.stop();
}, 60_000);

describe('the credential name is pinned by the CRD', () => {
  it("rejects a request naming this cluster's own talosconfig Secret (422), and writes nothing", async () => {
    const made = await kubectlCreate(
      reclaimYaml('own-config', foreignWorker().address, {
        credentialSecretRef: { name: 'plant-a-talosconfig' },
      }),
    );
    expect(made.code).not.toBe(0);
    expect(made.stderr).toContain('is invalid');
    expect(made.stderr).toContain(
      'spec.credentialSecretRef.name must be own-config-talosconfig',
    );
    await expect(
      rack.api.machineReclaims.create({
        apiVersion: 'rackside.dev/v1alpha1',
        kind: 'MachineReclaim',
        metadata: { name: 'own-config', namespace: NS },
        spec: {
          address: foreignWorker().address,
          targetCluster: 'plant-a',
          credentialSecretRef: { name: 'plant-a-talosconfig' },
        },
      } as any),
    ).rejects.toMatchObject({
      name: 'InputError',
      cause: { statusCode: 422 },
      message: expect.stringContaining(
        'spec.credentialSecretRef.name: Invalid value: spec.credentialSecretRef.name must be own-config-talosconfig',
      ),
    });
    expect(
      await rack.reclaims.find('own-config', { namespace: NS }),
    ).toBeUndefined();
    expect(await rack.secretExists('plant-a-talosconfig')).toBe(true);
  });
});

describe('a Secret the request did not get from the backend', () => {
  it('is left untouched when a kubectl-made request for a cluster that does not exist names it', async () => {
    // Someone's Secret that happens to carry the pinned name: no owner, no label.
    await rack.secret('victim-talosconfig', { talosconfig: 'precious' });
    const before = await secretNow('victim-talosconfig');
    const made = await kubectlCreate(
      reclaimYaml('victim', foreignWorker().address, {
        targetCluster: 'no-such-cluster',
      }),
    );
    expect(made.stderr).toBe('');
    const refused = await rack.reclaimPhase('victim', 'Refused');
    expect(refused.status?.result).toMatch(/no TalosCluster no-such-cluster/);
    expect(auditEvents(refused)).toContain('CredentialNotBound');
    expect(refused.status?.credentialDeletedAt).toBeUndefined();
    // Looked at again after the terminal write: still there, unchanged.
    await env.waitFor('the reclaim looked at after Refused', async () =>
      (await rack.reclaim('victim')).status?.credentialLeftAt ? true : false,
    );
    expect(await secretNow('victim-talosconfig')).toEqual(before);
    // Events are emitted after the status write they follow: wait for them, don't sample.
    expect(
      await rack.eventReasons('victim', ['Refused', 'CredentialNotBound']),
    ).toEqual(expect.arrayContaining(['Refused', 'CredentialNotBound']));
  });

  it('refuses a request whose named Secret has no ownerReference to it, without reading or deleting it', async () => {
    const worker = foreignWorker();
    await rack.secret('unbound-talosconfig', {
      talosconfig: rack.talosconfig('plant-old'),
    });
    const before = await secretNow('unbound-talosconfig');
    const made = await kubectlCreate(reclaimYaml('unbound', worker.address));
    expect(made.stderr).toBe('');
    const refused = await rack.reclaimPhase('unbound', 'Refused');
    expect(refused.status?.result).toBe(
      `The Secret unbound-talosconfig named by spec.credentialSecretRef is not the credential of this request: it has no ownerReference to MachineReclaim unbound (uid ${refused.metadata.uid}), and no label ${CREDENTIAL_OF_LABEL}=unbound. It was left untouched (not read, not deleted). Nothing was reset.`,
    );
    // The UUID was never read with it.
    expect(refused.status?.machineUUID).toBeUndefined();
    expect(auditEvents(refused)).not.toContain('UUIDRead');
    expect(await secretNow('unbound-talosconfig')).toEqual(before);
    expect((await rack.counts(worker.uuid)).reset ?? 0).toBe(0);
  });

  it('refuses a request whose named Secret is owned by another reclaim (uid mismatch), leaving it untouched', async () => {
    const worker = foreignWorker();
    // Another request (Refused at once: no such cluster) owns the Secret, so the garbage
    // collector keeps it; it even carries the label with this request's name.
    const other = await rack.createReclaim('other', rack.unusedAddress(77), {
      targetCluster: 'gone',
    });
    await rack.reclaimPhase('other', 'Refused');
    await env.core.createNamespacedSecret({
      namespace: NS,
      body: {
        metadata: {
          name: 'twin-talosconfig',
          namespace: NS,
          labels: { [CREDENTIAL_OF_LABEL]: 'twin' },
          ownerReferences: [
            {
              apiVersion: 'rackside.dev/v1alpha1',
              kind: 'MachineReclaim',
              name: 'other',
              uid: other.metadata.uid!,
            },
          ],
        },
        immutable: true,
        stringData: { talosconfig: rack.talosconfig('plant-old') },
      },
    });
    const before = await secretNow('twin-talosconfig');
    const twin = await rack.createReclaim('twin', worker.address);
    const refused = await rack.reclaimPhase('twin', 'Refused');
    expect(refused.status?.result).toContain(
      `it has no ownerReference to MachineReclaim twin (uid ${twin.metadata.uid})`,
    );
    expect(refused.status?.result).not.toContain('no label');
    expect(refused.status?.machineUUID).toBeUndefined();
    await env.waitFor('the reclaim looked at after Refused', async () =>
      (await rack.reclaim('twin')).status?.credentialLeftAt ? true : false,
    );
    expect(await secretNow('twin-talosconfig')).toEqual(before);
    expect((await rack.counts(worker.uuid)).reset ?? 0).toBe(0);
  });

  it('waits for a Secret that is not there yet, then goes on once the backend has written it', async () => {
    const worker = foreignWorker();
    const mr = await rack.createReclaim('late-secret', worker.address);
    const waiting = await env.waitFor('the Waiting condition', async () => {
      const got = await rack.reclaim('late-secret');
      const c = got.status?.conditions?.find(x => x.type === 'Waiting');
      return c?.reason === 'CredentialMissing' && got;
    });
    expect(waiting.status?.phase).toBe('Pending');
    await boundSecret(mr, rack.talosconfig('plant-old'));
    const awaiting = await rack.reclaimPhase(
      'late-secret',
      'AwaitingConfirmation',
    );
    expect(awaiting.status?.machineUUID).toBe(worker.uuid);
  });
});

describe('network reach of spec.address (DESIGN 5b)', () => {
  it('refuses kubectl-made requests for addresses outside the allowed networks; nothing is contacted', async () => {
    // The trap counts what it gets: one connection of our own proves it would see a call.
    await new Promise<void>((resolve, reject) => {
      const probe = net.connect(50000, trap.host, () => {
        probe.destroy();
        resolve();
      });
      probe.once('error', reject);
    });
    await env.waitFor('the trap counted our connection', async () =>
      trap.connections() === 1 ? true : undefined,
    );
    const apiserver = new URL(env.rack.info.server as string);
    const networks = rack.machineNetwork();
    const outside = `outside the allowed networks (${networks})`;
    const cases: Array<{ name: string; address: string; why: string }> = [
      { name: 'reach-trap', address: trap.host, why: outside },
      { name: 'reach-trap-port', address: `${trap.host}:50000`, why: outside },
      {
        name: 'reach-mapped',
        address: `[::ffff:${trap.host}]:50000`,
        why: outside,
      },
      {
        name: 'reach-apiserver',
        address: `${apiserver.hostname}:${apiserver.port}`,
        why: `port ${apiserver.port} is not the Talos API port of this cluster (50000)`,
      },
      {
        // Resolved by the operator: 127.0.0.1 (and ::1), outside.
        name: 'reach-name',
        address: 'localhost',
        why: `localhost resolves to an address outside the allowed networks (${networks})`,
      },
    ];
    for (const { name, address } of cases) {
      // As the admin (a holder of the reclaim verb), attributed to itself.
      const made = await kubectl(
        env.rack.info.kubeconfig as string,
        ['create', '-f', '-'],
        reclaimYaml(name, address, { requestedBy: ADMIN_USER }),
      );
      expect(made.stderr).toBe('');
      // The credential as the backend writes it: bound to the request.
      await boundSecret(
        await rack.reclaim(name),
        rack.talosconfig('plant-old'),
      );
    }
    for (const { name, address, why } of cases) {
      const refused = await rack.reclaimPhase(name, 'Refused');
      expect(refused.status?.result).toBe(
        `${address} is not contacted: ${why}. Nothing was reset.`,
      );
      expect(refused.status?.machineUUID).toBeUndefined();
      expect(auditEvents(refused)).not.toContain('UUIDRead');
      // The credential is handled as at every refusal: the bound Secret is deleted.
      expect(auditEvents(refused)).toContain('CredentialDeleted');
      expect(refused.status?.credentialDeletedAt).toBeDefined();
      expect(await rack.secretExists(`${name}-talosconfig`)).toBe(false);
      expect(await rack.eventReasons(name, ['Refused'])).toContain('Refused');
    }
    // Only our own connection: the operator never dialed the trap.
    expect(trap.connections()).toBe(1);
  });

  it('never dials a control-plane endpoint of the foreign talosconfig that is outside the allowed networks (the etcd check)', async () => {
    const before = trap.connections();
    // plant-old's talosconfig with its endpoints pointed at the trap: the credential,
    // not the deployer, names them.
    const hostile = parse(rack.talosconfig('plant-old'));
    for (const context of Object.values<any>(hostile.contexts)) {
      context.endpoints = [trap.host, `${trap.host}:50000`];
    }
    const worker = foreignWorker();
    await kubectl(
      env.rack.info.kubeconfig as string,
      ['create', '-f', '-'],
      reclaimYaml('reach-etcd', worker.address, { requestedBy: ADMIN_USER }),
    );
    await boundSecret(await rack.reclaim('reach-etcd'), stringify(hostile));
    // The worker answers its UUID but runs no etcd; the endpoints are not contacted.
    const waiting = await env.waitFor(
      'reach-etcd waiting on etcd',
      async () => {
        const mr = await rack.reclaim('reach-etcd');
        const condition = mr.status?.conditions?.find(
          c => c.type === 'Waiting',
        );
        return condition?.reason === 'EtcdMembersUnknown' && condition;
      },
    );
    expect(waiting.message).toContain(
      `${trap.host}: not contacted: outside the allowed networks`,
    );
    expect((await rack.reclaim('reach-etcd')).status?.phase).toBe('Pending');
    expect(trap.connections()).toBe(before);
    expect((await rack.counts(worker.uuid)).reset ?? 0).toBe(0);
    await rack.reclaims.delete('reach-etcd', { namespace: NS });
  });
});

describe("this cluster's own machines", () => {
  it('refuses a machine whose UUID is a Node of this cluster: that goes through maintenance', async () => {
    const worker = foreignWorker();
    // A Node of this cluster with the foreign worker's system UUID (not kwok-managed).
    await env.nodes.create({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'holds-the-worker' },
    } as any);
    await env.nodes.patchStatus(
      'holds-the-worker',
      {
        status: { nodeInfo: { systemUUID: worker.uuid.toUpperCase() } },
      } as any,
      { type: 'merge' },
    );
    try {
      const mr = await rack.createReclaim('own-node', worker.address);
      await boundSecret(mr, rack.talosconfig('plant-old'));
      const refused = await rack.reclaimPhase('own-node', 'Refused');
      expect(refused.status?.result).toBe(
        `${worker.address} has the UUID ${worker.uuid}, the system UUID of Node holds-the-worker of this cluster: taking our own machines out goes through maintenance. Nothing was reset.`,
      );
      expect(refused.status?.machineUUID).toBeUndefined();
      expect(await rack.secretExists('own-node-talosconfig')).toBe(false);
      expect((await rack.counts(worker.uuid)).reset ?? 0).toBe(0);
    } finally {
      await env.nodes.delete('holds-the-worker');
    }
  });

  it("refuses a talosconfig issued by the target cluster's own CA, before any call to the machine", async () => {
    const own = rack.byNode('worker-6');
    const mr = await rack.createReclaim('own-ca', own.address);
    await boundSecret(mr, rack.talosconfig('plant-a'));
    const refused = await rack.reclaimPhase('own-ca', 'Refused');
    expect(refused.status?.result).toBe(
      `The talosconfig in Secret own-ca-talosconfig is issued by the CA of TalosCluster plant-a itself: ${own.address} would be one of our own machines, and taking our own machines out goes through maintenance. Nothing was reset.`,
    );
    expect(refused.status?.machineUUID).toBeUndefined();
    expect(await rack.secretExists('own-ca-talosconfig')).toBe(false);
    expect(await rack.emulated(own.uuid)).toMatchObject({
      mode: 'configured',
      cluster: 'plant-a',
    });
    expect((await rack.counts(own.uuid)).reset ?? 0).toBe(0);
  });
});

describe('the etcd of the foreign cluster, read again at the reset', () => {
  it('refuses the reset when a foreign control plane went down after the UUID was read; no Reset is sent', async () => {
    const [target, other] = rack.spares;
    // plant-old gets three control planes: the fixture's and the two spares.
    await joinPlantOld(target, 'controlplane');
    await joinPlantOld(other, 'controlplane');
    const mr = await rack.createReclaim('quorum', target.address);
    await boundSecret(mr, rack.talosconfig('plant-old'));
    await rack.appendReclaimAddress(target.address);
    const awaiting = await rack.reclaimPhase('quorum', 'AwaitingConfirmation');
    expect(awaiting.status?.audit?.at(-1)?.message).toMatch(
      /3 voting etcd members, quorum 2, 2 remain after the reset/,
    );

    // Between the confirmation screen and the reset another member loses power.
    await power(other.uuid, 'off');
    await rack.reclaims.patch(
      'quorum',
      { spec: { confirmUUID: target.uuid } } as any,
      { namespace: NS, type: 'merge' },
    );
    const refused = await rack.reclaimPhase('quorum', 'Refused');
    expect(refused.status?.result).toMatch(
      new RegExp(
        `Refused: resetting ${
          target.address
        } would break the foreign cluster's etcd quorum: 3 voting members need 2, 2 are up \\(.*${other.address.replace(
          /\./g,
          '\\.',
        )}.* does not answer\\), and 1 would remain\\. Nothing was reset\\.`,
      ),
    );
    expect(auditEvents(refused)).not.toContain('ResetRecorded');
    expect(refused.status?.resetRecordedAt).toBeUndefined();
    expect((await rack.counts(target.uuid)).reset ?? 0).toBe(0);
    expect(await rack.emulated(target.uuid)).toMatchObject({
      mode: 'configured',
      cluster: 'plant-old',
    });
    expect(await rack.secretExists('quorum-talosconfig')).toBe(false);
    await power(other.uuid, 'on');
  });

  it('two resets confirmed at once, each safe alone but not both: exactly one is sent', async () => {
    const [a, b] = rack.spares;
    // Both spares are plant-old control planes from the test before (b powered on again).
    await env.waitFor(`${b.uuid} running again`, async () => {
      const m = await rack.emulated(b.uuid);
      return m.mode === 'configured' && m.state === 'running';
    });
    for (const [name, machine] of [
      ['race-a', a],
      ['race-b', b],
    ] as const) {
      const mr = await rack.createReclaim(name, machine.address);
      await boundSecret(mr, rack.talosconfig('plant-old'));
    }
    const awaiting = await Promise.all(
      ['race-a', 'race-b'].map(name =>
        rack.reclaimPhase(name, 'AwaitingConfirmation'),
      ),
    );
    for (const mr of awaiting) {
      expect(mr.status?.audit?.at(-1)?.message).toMatch(
        /3 voting etcd members, quorum 2, 2 remain after the reset/,
      );
    }
    await Promise.all(
      [
        ['race-a', a],
        ['race-b', b],
      ].map(([name, machine]) =>
        rack.reclaims.patch(
          name as string,
          { spec: { confirmUUID: (machine as RackMachine).uuid } } as any,
          { namespace: NS, type: 'merge' },
        ),
      ),
    );
    const settled = await env.waitFor(
      'both requests past the confirmation',
      async () => {
        const both = await Promise.all(
          ['race-a', 'race-b'].map(name => rack.reclaim(name)),
        );
        return (
          both.every(mr =>
            ['WaitingForMaintenance', 'Done', 'Refused', 'Failed'].includes(
              mr.status?.phase ?? '',
            ),
          ) && both
        );
      },
    );
    const resets =
      ((await rack.counts(a.uuid)).reset ?? 0) +
      ((await rack.counts(b.uuid)).reset ?? 0);
    expect(resets).toBe(1);
    const refused = settled.filter(mr => mr.status?.phase === 'Refused');
    expect(refused).toHaveLength(1);
    const sent = settled.find(mr => mr.status?.phase !== 'Refused')!;
    expect(refused[0].status?.result).toContain(
      `being reset by MachineReclaim ${sent.metadata.name}`,
    );
    expect(refused[0].status?.resetRecordedAt).toBeUndefined();
    // Its own waits (30 s + 60 s + 30 s) end first, with what they saw and the operator's
    // log, on a machine busy with other suites.
  }, 240_000);
});
