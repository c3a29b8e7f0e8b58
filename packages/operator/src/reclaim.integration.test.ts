/*
 * Reset and add (decision 0002) on the simulated rack, at the operator level: the operator with
 * its own ServiceAccount, its admission webhook registered with the rack's apiserver, and
 * machines of the foreign Talos cluster plant-old on the Talos emulator (which counts the
 * Resets it receives). Each test plays the backend's part itself: the request, its
 * credential Secret owned by it and labelled with its name, and the appended discovery
 * address with the annotation. Requests whose Secret is not theirs:
 * reclaimBinding.integration.test.ts.
 */
import { type MachineReclaim } from '@rackside/plugin-servers-common';
import { RacksideClient, ResourceClient } from '@rackside/plugin-servers-node';
import { stringify } from 'yaml';
import type { Operator, OperatorOptions } from './operator';
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
import {
  startWebhookServer,
  subjectAccessReviews,
  webhookTls,
  type WebhookServer,
} from './webhook/server';

jest.setTimeout(120_000);

/** Shortened from 10 minutes; not a multiple of the 10 s retry, so the last wait is the time left. */
const MAINTENANCE_WAIT_MS = 25_000;

let env: OperatorRack;
let rack: ReturnType<typeof machinesRack>;
let operator: Operator | undefined;
let webhook: WebhookServer;
let engineer: Awaited<ReturnType<typeof rack.userWithRules>>;
let reclaimer: Awaited<ReturnType<typeof rack.userWithRules>>;
const webhookLog: string[] = [];

const machineSettings = (
  reclaim: Record<string, number> = {},
): Partial<OperatorOptions> => ({
  machines: { reclaim: { maintenanceWaitMs: MAINTENANCE_WAIT_MS, ...reclaim } },
});

/** A MachineReclaim as a kubectl user writes it: `requestedBy` is that writer's username. */
const reclaimYaml = (name: string, address: string, requestedBy: string) =>
  stringify({
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MachineReclaim',
    metadata: { name, namespace: NS },
    spec: {
      address,
      targetCluster: 'plant-a',
      credentialSecretRef: { name: `${name}-talosconfig` },
      reason: 'kubectl test',
      requestedBy,
    },
  });

/**
 * What the backend does for a new request: the request, its Secret (owned by it), the
 * address. `requestedBy` is the writer's own username (the chart's attribution policy).
 */
async function requestReclaim(
  name: string,
  machine: RackMachine,
  client: RacksideClient = rack.api,
  requestedBy: string = ADMIN_USER,
  /** Append the address to the TalosCluster's discovery (false: it is listed already). */
  appendAddress = true,
) {
  const mr = await client.machineReclaims.create({
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MachineReclaim',
    metadata: { name, namespace: NS },
    spec: {
      address: machine.address,
      targetCluster: 'plant-a',
      credentialSecretRef: { name: `${name}-talosconfig`, key: 'talosconfig' },
      requestedBy,
      reason: 'reuse an old plant-old machine',
    },
  });
  await env.core.createNamespacedSecret({
    namespace: NS,
    body: {
      // The shape the backend writes (docs/architecture.md, "Adding machines"): the operator uses no other.
      metadata: {
        name: `${name}-talosconfig`,
        namespace: NS,
        labels: { 'rackside.dev/credential-of': name },
        ownerReferences: [
          {
            apiVersion: 'rackside.dev/v1alpha1',
            kind: 'MachineReclaim',
            name,
            uid: mr.metadata.uid!,
          },
        ],
      },
      immutable: true,
      stringData: { talosconfig: rack.talosconfig('plant-old') },
    },
  });
  if (appendAddress) await rack.appendReclaimAddress(machine.address);
  return mr;
}

const confirmPatch = (uuid: string) =>
  JSON.stringify({ spec: { confirmUUID: uuid } });

async function confirmWithKubectl(
  user: { kubeconfig: string },
  name: string,
  uuid: string,
) {
  return kubectl(user.kubeconfig, [
    '-n',
    NS,
    'patch',
    'machinereclaims.rackside.dev',
    name,
    '--type',
    'merge',
    '-p',
    confirmPatch(uuid),
  ]);
}

const auditEvents = (mr: MachineReclaim) =>
  (mr.status?.audit ?? []).map(a => a.event);

/** Makes a spare a running member of plant-old; a timeout says what the emulator showed. */
const joinPlantOld = (machine: RackMachine) =>
  rack.joinForeignRunning(machine, 'plant-old');

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: false,
  });
  rack = machinesRack(env);
  await rack.createClusterSecrets();
  await rack.createCluster([], 300);

  // The webhook, as the operator process serves it, judged with the operator's identity.
  const tls = await webhookTls({ hosts: ['127.0.0.1'] });
  webhook = await startWebhookServer({
    tls,
    access: subjectAccessReviews(env.operatorKc),
    host: '127.0.0.1',
    port: 0,
    log: m => webhookLog.push(m),
  });
  await rack.registerWebhook(webhook.port, tls.caPem!);

  const requestRules = {
    apiGroups: ['rackside.dev'],
    resources: ['machinereclaims'],
    verbs: ['create', 'get', 'list', 'watch', 'update', 'patch'],
  };
  engineer = await rack.userWithRules('engineer', [requestRules]);
  reclaimer = await rack.userWithRules('reclaimer', [
    { ...requestRules, verbs: [...requestRules.verbs, 'reclaim'] },
  ]);
  // The apiserver picks the registration up within a moment: wait until it answers with it.
  await env.waitFor('the webhook to be in force', async () => {
    const dry = await kubectl(
      engineer.kubeconfig,
      ['create', '--dry-run=server', '-f', '-'],
      reclaimYaml('probe', '127.0.0.1', engineer.username),
    );
    return dry.code !== 0 && /denied the request/.test(dry.stderr);
  });

  operator = await env.startReady(machineSettings());
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await webhook?.close();
  await env?.stop();
}, 60_000);

describe('the reclaim verb', () => {
  it('stops a user without the verb, even with kubectl, and writes nothing', async () => {
    const [, worker] = rack.foreign;
    const denied = await kubectl(
      engineer.kubeconfig,
      ['create', '-f', '-'],
      reclaimYaml('by-engineer', worker.address, engineer.username),
    );
    expect(denied.code).not.toBe(0);
    expect(denied.stderr).toContain(
      'admission webhook "machinereclaims.rackside.dev" denied the request',
    );
    expect(denied.stderr).toContain(
      `${engineer.username} may not create a MachineReclaim (Reset and add): it needs the "reclaim" verb on machinereclaims.rackside.dev in namespace ${NS}`,
    );
    expect(
      await rack.reclaims.find('by-engineer', { namespace: NS }),
    ).toBeUndefined();

    // The same request by a user holding the verb passes the webhook (dry run: nothing kept).
    const allowed = await kubectl(
      reclaimer.kubeconfig,
      ['create', '--dry-run=server', '-f', '-'],
      reclaimYaml('by-reclaimer', worker.address, reclaimer.username),
    );
    expect(allowed.stderr).toBe('');
    expect(allowed.code).toBe(0);
  });
});

describe('Reset and add', () => {
  it("refuses a reset that would remove the foreign cluster's last control plane", async () => {
    const controlPlane = rack.foreign.find(m => m.role === 'controlplane')!;
    await requestReclaim('reclaim-cp', controlPlane);
    const refused = await rack.reclaimPhase('reclaim-cp', 'Refused');
    expect(refused.status?.result).toMatch(
      /would remove the last control plane of the foreign cluster.*Nothing was reset/,
    );
    expect(refused.status?.machineUUID).toBeUndefined();
    expect(auditEvents(refused)).toEqual([
      'Created',
      'Refused',
      'CredentialDeleted',
    ]);
    expect(await rack.secretExists('reclaim-cp-talosconfig')).toBe(false);
    expect((await rack.counts(controlPlane.uuid)).reset ?? 0).toBe(0);
    expect((await rack.emulated(controlPlane.uuid)).cluster).toBe('plant-old');
    expect(
      await rack.eventReasons('reclaim-cp', [
        'Created',
        'Refused',
        'CredentialDeleted',
      ]),
    ).toEqual(
      expect.arrayContaining(['Created', 'Refused', 'CredentialDeleted']),
    );
  });

  const worker = () => rack.foreign.find(m => m.role === 'worker')!;

  it("reads the machine's UUID with the foreign talosconfig and waits for it to be typed", async () => {
    const asReclaimer = new RacksideClient(reclaimer.kubeConfig);
    const created = await requestReclaim(
      'reclaim-w',
      worker(),
      asReclaimer,
      reclaimer.username,
    );
    const awaiting = await rack.reclaimPhase(
      'reclaim-w',
      'AwaitingConfirmation',
    );
    expect(awaiting.status?.machineUUID).toBe(worker().uuid);
    expect(Date.parse(awaiting.status!.expiresAt!)).toBe(
      Date.parse(created.metadata.creationTimestamp!) + 15 * 60_000,
    );
    expect(auditEvents(awaiting)).toEqual(['Created', 'UUIDRead']);
    expect(awaiting.status?.audit?.[1].message).toMatch(
      /not an etcd member of the foreign cluster/,
    );
    expect(await rack.secretExists('reclaim-w-talosconfig')).toBe(true);
    expect((await rack.counts(worker().uuid)).reset ?? 0).toBe(0);
  });

  it('rejects a wrong typed UUID, and a confirm by a user without the verb; nothing changes', async () => {
    const wrong = await confirmWithKubectl(
      reclaimer,
      'reclaim-w',
      '00000000-0000-4000-8000-000000000000',
    );
    expect(wrong.code).not.toBe(0);
    expect(wrong.stderr).toMatch(
      /denied the request: the typed UUID 00000000-0000-4000-8000-000000000000 does not match the UUID the operator read from/,
    );
    const byEngineer = await confirmWithKubectl(
      engineer,
      'reclaim-w',
      worker().uuid,
    );
    expect(byEngineer.code).not.toBe(0);
    expect(byEngineer.stderr).toMatch(/may not confirm a MachineReclaim/);
    const unchanged = await rack.reclaim('reclaim-w');
    expect(unchanged.spec.confirmUUID).toBeUndefined();
    expect(unchanged.status?.phase).toBe('AwaitingConfirmation');
    expect((await rack.counts(worker().uuid)).reset ?? 0).toBe(0);
  });

  it('resets the machine once on the typed UUID, deletes the credential, and is Done when it is back in maintenance mode', async () => {
    const typed = await confirmWithKubectl(
      reclaimer,
      'reclaim-w',
      worker().uuid.toUpperCase(),
    );
    expect(typed.stderr).toBe('');
    expect(typed.code).toBe(0);
    const done = await rack.reclaimPhase('reclaim-w', 'Done', 30_000);
    expect(done.status).toMatchObject({
      confirmedAt: expect.any(String),
      resetRecordedAt: expect.any(String),
      resetSentAt: expect.any(String),
      credentialDeletedAt: expect.any(String),
      result: expect.stringMatching(/answers in maintenance mode with UUID/),
    });
    expect(auditEvents(done)).toEqual([
      'Created',
      'UUIDRead',
      'Confirmed',
      'ResetRecorded',
      'ResetSent',
      'CredentialDeleted',
      'Done',
    ]);
    expect(await rack.secretExists('reclaim-w-talosconfig')).toBe(false);
    expect((await rack.counts(worker().uuid)).reset).toBe(1);
    expect(await rack.emulated(worker().uuid)).toMatchObject({
      mode: 'maintenance',
      address: worker().address,
    });
    expect(
      await rack.eventReasons('reclaim-w', [
        'Confirmed',
        'ResetSent',
        'CredentialDeleted',
        'Done',
      ]),
    ).toEqual(
      expect.arrayContaining([
        'Confirmed',
        'ResetSent',
        'CredentialDeleted',
        'Done',
      ]),
    );
  });

  it('wakes discovery at once: the reset machine is a Pending TalosMachine within seconds, and joins', async () => {
    const done = await rack.reclaim('reclaim-w');
    const doneAt = Date.parse(done.status!.audit!.at(-1)!.at);
    // Discovery's interval is 300 s and it probed this address when it was appended.
    const pending = await rack.machinePhase(worker().uuid, 'Pending', 15_000);
    expect(pending.status?.address).toBe(worker().address);
    expect(
      Date.parse(pending.metadata.creationTimestamp!) - doneAt,
    ).toBeLessThan(10_000);

    await rack.api.talosMachines.patch(
      worker().uuid,
      {
        spec: { join: { by: ADMIN_USER, reason: 'reclaimed' } },
      } as any,
      { namespace: NS, type: 'merge' },
    );
    const joined = await rack.machinePhase(worker().uuid, 'Joined', 60_000);
    const node = await env.nodes.get(joined.status!.nodeName!);
    expect(node.status?.nodeInfo?.systemUUID?.toLowerCase()).toBe(
      worker().uuid,
    );
  });

  it('fails exactly at the (shortened) deadline, not before, when the machine does not come back', async () => {
    const spare = rack.spares[0];
    await joinPlantOld(spare);
    // At its reset it takes another address, as a new DHCP lease would.
    await rack.resetAddress(spare.uuid, 51);
    await requestReclaim('reclaim-gone', spare);
    await rack.reclaimPhase('reclaim-gone', 'AwaitingConfirmation');
    await rack.reclaims.patch(
      'reclaim-gone',
      { spec: { confirmUUID: spare.uuid } } as any,
      { namespace: NS, type: 'merge' },
    );
    const waiting = await rack.reclaimPhase(
      'reclaim-gone',
      'WaitingForMaintenance',
    );
    const sentAt = Date.parse(waiting.status!.resetSentAt!);
    expect(Number.isFinite(sentAt)).toBe(true);
    const deadline = sentAt + MAINTENANCE_WAIT_MS;

    // Watch the phase through the whole window: every answer the apiserver gave before
    // the deadline says WaitingForMaintenance. (One sample shortly before the deadline
    // was flaky on a loaded machine: a late answer could arrive after the deadline.)
    const seen: Array<{ phase?: string; answeredAt: number }> = [];
    const failed = await env.waitFor(
      'MachineReclaim reclaim-gone in Failed',
      async () => {
        const mr = await rack.reclaim('reclaim-gone');
        seen.push({ phase: mr.status?.phase, answeredAt: Date.now() });
        return mr.status?.phase === 'Failed' && mr;
      },
      MAINTENANCE_WAIT_MS + 15_000,
    );
    const beforeDeadline = seen.filter(s => s.answeredAt < deadline);
    expect(beforeDeadline.length).toBeGreaterThan(0);
    expect(new Set(beforeDeadline.map(s => s.phase))).toEqual(
      new Set(['WaitingForMaintenance']),
    );
    const failedAt = Date.parse(failed.status!.audit!.at(-1)!.at);
    expect(failed.status!.audit!.at(-1)!.event).toBe('ReclaimFailed');
    expect(failedAt - sentAt).toBeGreaterThanOrEqual(MAINTENANCE_WAIT_MS);
    // At the deadline, not at the next 10 s retry (which would be 5 s late).
    expect(failedAt - sentAt).toBeLessThan(MAINTENANCE_WAIT_MS + 4000);
    expect(failed.status?.result).toBe(
      `${spare.address} did not return to maintenance mode with UUID ${spare.uuid} within 25 seconds of the reset. It may have taken a new address from DHCP: scan for the machine and add its address to a TalosCluster's spec.discovery.addresses.`,
    );
    expect(await rack.secretExists('reclaim-gone-talosconfig')).toBe(false);
    // It did come back, elsewhere.
    expect(await rack.emulated(spare.uuid)).toMatchObject({
      mode: 'maintenance',
      address: rack.unusedAddress(51),
    });
    // Reading the cluster writes nothing: the failed request's address is still listed.
    await new Promise(r => setTimeout(r, 2000));
    const cluster = await rack.cluster();
    expect(cluster.spec.discovery?.addresses).toContain(spare.address);
    expect(
      cluster.metadata.annotations?.['rackside.dev/reclaim-added-addresses'],
    ).toContain(spare.address);
  });

  it('expires an unconfirmed request and deletes its Secret', async () => {
    await operator!.stop();
    operator = await env.startReady(machineSettings({ ttlMaxMs: 8000 }));

    const gone = rack.spares[0];
    const late = rack.spares[1];
    await joinPlantOld(late);
    const created = await requestReclaim('reclaim-late', late);
    const awaiting = await rack.reclaimPhase(
      'reclaim-late',
      'AwaitingConfirmation',
    );
    expect(Date.parse(awaiting.status!.expiresAt!)).toBe(
      Date.parse(created.metadata.creationTimestamp!) + 8000,
    );
    expect(auditEvents(awaiting)).toEqual(['Created', 'UUIDRead']);
    // The operator never writes the TalosCluster's spec: every address the backend
    // appended is still listed (taking stale ones out is the backend's, on create and
    // confirm, as the user).
    const controlPlane = rack.foreign.find(m => m.role === 'controlplane')!;
    const cluster = await rack.cluster();
    expect(cluster.spec.discovery?.addresses).toEqual([
      controlPlane.address,
      worker().address,
      gone.address,
      late.address,
    ]);
    expect(
      cluster.metadata.annotations?.['rackside.dev/reclaim-added-addresses'],
    ).toBe(
      [controlPlane.address, worker().address, gone.address, late.address].join(
        ',',
      ),
    );

    const expired = await rack.reclaimPhase('reclaim-late', 'Expired', 20_000);
    expect(expired.status?.result).toMatch(
      /not confirmed before .*expired and its credential was deleted/,
    );
    expect(expired.status?.credentialDeletedAt).toBeDefined();
    expect(await rack.secretExists('reclaim-late-talosconfig')).toBe(false);
    expect((await rack.counts(late.uuid)).reset ?? 0).toBe(0);

    const tooLate = await confirmWithKubectl(
      reclaimer,
      'reclaim-late',
      late.uuid,
    );
    expect(tooLate.code).not.toBe(0);
    expect(tooLate.stderr).toMatch(
      /is not awaiting confirmation \(phase Expired\)/,
    );
  });

  it('with the webhook switched off, a request by a user without the verb is refused by the operator right before the reset: nothing is sent', async () => {
    await operator!.stop();
    operator = await env.startReady(machineSettings());
    // webhook.enabled: false (or failurePolicy: Ignore with the webhook down).
    await new ResourceClient<any>(env.admin, {
      group: 'admissionregistration.k8s.io',
      version: 'v1',
      plural: 'validatingwebhookconfigurations',
      kind: 'ValidatingWebhookConfiguration',
      namespaced: false,
    }).delete('rackside-machinereclaims');
    await env.waitFor('the webhook no longer asked', async () => {
      const dry = await kubectl(
        engineer.kubeconfig,
        ['create', '--dry-run=server', '-f', '-'],
        reclaimYaml('probe', '127.0.0.1', engineer.username),
      );
      return dry.code === 0;
    });
    const machine = rack.spares[1];
    const asEngineer = new RacksideClient(engineer.kubeConfig);
    await requestReclaim(
      'reclaim-unchecked',
      machine,
      asEngineer,
      engineer.username,
      false,
    );
    await rack.reclaimPhase('reclaim-unchecked', 'AwaitingConfirmation');
    const typed = await confirmWithKubectl(
      engineer,
      'reclaim-unchecked',
      machine.uuid,
    );
    expect(typed.code).toBe(0);
    const refused = await rack.reclaimPhase('reclaim-unchecked', 'Refused');
    expect(refused.status?.result).toMatch(
      new RegExp(
        `${engineer.username} may not reset ${machine.address}: the requester needs the "reclaim" verb on machinereclaims.rackside.dev in namespace ${NS}, checked by the operator right before the reset.*Nothing was reset\\.`,
      ),
    );
    expect(refused.status?.resetRecordedAt).toBeUndefined();
    expect((await rack.counts(machine.uuid)).reset ?? 0).toBe(0);
  });
});
