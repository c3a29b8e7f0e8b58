/*
 * Talos upgrades on the simulated rack (docs/upgrades.md): the operator with its own
 * ServiceAccount sends MachineService.Upgrade to the Talos emulator, which installs the
 * image's version after its installer delay, reboots, and writes the Node's osImage, or
 * boots the old version again for an image on its failing list. NodeMaintenances are
 * written as kubectl would write them; the emulator's record of every Upgrade it received
 * is what says how many were sent.
 */
import type { Operator } from './operator';
import { startOperatorRack, type OperatorRack } from './testing/operatorRack';
import { powerRack, TALOS_PROVIDER } from './testing/powerRack';

jest.setTimeout(180_000);

const FACTORY = 'factory.talos.dev/installer/';
const SCHEMATIC =
  '376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba';
const TARGET = 'v1.14.0';
const IMAGE = `${FACTORY}${SCHEMATIC}:${TARGET}`;
/** An image the emulator is told fails: the machine boots the old version again. */
const FAILING_IMAGE = `${FACTORY}${'f'.repeat(64)}:${TARGET}`;

interface UpgradeHistory {
  version: string;
  count: number;
  requests: Array<{
    image: string;
    result: string;
    from: string;
    to?: string;
    stage?: boolean;
  }>;
}

let env: OperatorRack;
let rack: ReturnType<typeof powerRack>;
let operator: Operator | undefined;

const upgradesOf = (node: string) =>
  rack.control<UpgradeHistory>(`/machines/${rack.uuidOf(node)}/upgrades`);
const osImageOf = async (node: string) =>
  (await env.nodes.get(node)).status?.nodeInfo?.osImage;
const bootIdOf = async (node: string) =>
  (await env.nodes.get(node)).status?.nodeInfo?.bootID;

const OPERATOR_OPTIONS = {
  drain: { initialBackoffMs: 200, maxBackoffMs: 1000 },
  power: { rebootSeconds: 60, unansweredSeconds: 60, upgradeSeconds: 90 },
  upgrades: { imagePrefixes: [FACTORY] },
};

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: true,
    withRedfish: false,
    withWorkloads: false,
  });
  rack = powerRack(env);
  await rack.createPowerSecrets();
  await rack.control('/upgrade', {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ delayMs: 500, failing: [FAILING_IMAGE] }),
  });
  operator = await env.startReady(OPERATOR_OPTIONS);
  await rack.provide(TALOS_PROVIDER);
}, 240_000);

afterAll(async () => {
  await operator?.stop();
  await env?.stop();
}, 60_000);

describe('a Talos upgrade', () => {
  it('upgrades a worker end to end: drained, sent once, back Ready on the new version', async () => {
    const before = await upgradesOf('worker-1');
    expect(before.version).not.toBe(TARGET);
    expect(await osImageOf('worker-1')).toBe(`Talos (${before.version})`);
    const bootBefore = await bootIdOf('worker-1');

    await env.create('upgrade-w1', 'worker-1', 'upgrade', {
      upgrade: { image: IMAGE },
    });
    const complete = await env.phaseIs('upgrade-w1', 'Complete', 90_000);
    expect(complete.status?.history?.map(h => h.phase)).toEqual([
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'Rebooting',
      'Returning',
      'Complete',
    ]);
    expect(complete.status?.upgrade).toMatchObject({
      image: IMAGE,
      fromVersion: before.version,
      toVersion: TARGET,
      cameBackOn: TARGET,
      sentAt: expect.any(String),
    });
    expect(complete.status?.power?.upgrade).toMatchObject({
      channel: 'talos',
      sentAt: expect.any(String),
    });
    const after = await upgradesOf('worker-1');
    expect(after.version).toBe(TARGET);
    expect(after.count).toBe(before.count + 1);
    expect(after.requests.at(-1)).toMatchObject({
      image: IMAGE,
      result: 'installed',
      from: before.version,
      to: TARGET,
    });
    expect(await osImageOf('worker-1')).toBe(`Talos (${TARGET})`);
    expect(await bootIdOf('worker-1')).not.toBe(bootBefore);
    expect(await env.unschedulable('worker-1')).toBe(false);
    expect((await rack.powerCounts('worker-1')).reboot).toBe(0);
  });

  it('refuses a node already at the target, sending nothing', async () => {
    await rack.control(`/machines/${rack.uuidOf('worker-2')}/version`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ version: TARGET }),
    });
    await env.waitFor('worker-2 reporting the target', async () => {
      return (await osImageOf('worker-2')) === `Talos (${TARGET})`;
    });
    const before = await upgradesOf('worker-2');
    await env.create('upgrade-w2', 'worker-2', 'upgrade', {
      upgrade: { image: IMAGE },
    });
    const refused = await env.phaseIs('upgrade-w2', 'Refused');
    expect(refused.status?.refusal?.reason).toMatch(
      new RegExp(`^upgrade of worker-2 was not sent: already at ${TARGET}\\.`),
    );
    expect(refused.status?.power?.upgrade).toBeUndefined();
    expect((await upgradesOf('worker-2')).count).toBe(before.count);
  });

  it('names a rollback: Talos boots the old version again, the maintenance is Failed', async () => {
    const before = await upgradesOf('worker-3');
    await env.create('upgrade-w3', 'worker-3', 'upgrade', {
      upgrade: { image: FAILING_IMAGE },
    });
    const failed = await env.phaseIs('upgrade-w3', 'Failed', 90_000);
    expect(failed.status?.message).toBe(
      `worker-3 came back on ${before.version}, not ${TARGET} (Talos rolled the upgrade back). The node is left cordoned.`,
    );
    expect(failed.status?.upgrade).toMatchObject({
      fromVersion: before.version,
      toVersion: TARGET,
      cameBackOn: before.version,
    });
    const after = await upgradesOf('worker-3');
    expect(after.version).toBe(before.version);
    expect(after.count).toBe(before.count + 1);
    expect(after.requests.at(-1)).toMatchObject({
      image: FAILING_IMAGE,
      result: 'rolledBack',
    });
    expect(await env.unschedulable('worker-3')).toBe(true);
    expect(await env.eventReasons('upgrade-w3', ['UpgradeFailed'])).toContain(
      'UpgradeFailed',
    );
  });

  it.each([
    ['outside the allowed list', `ghcr.io/evil/installer:${TARGET}`],
    [
      'on a registry that only starts like the allowed one',
      `factory.talos.dev.evil.example/installer/${SCHEMATIC}:${TARGET}`,
    ],
  ])(
    'refuses an image %s written with kubectl, at the operator, sending nothing',
    async (_what, image) => {
      const name = `upgrade-w4-${image.startsWith('ghcr') ? 'a' : 'b'}`;
      const before = await upgradesOf('worker-4');
      await env.create(name, 'worker-4', 'upgrade', { upgrade: { image } });
      const refused = await env.phaseIs(name, 'Refused');
      expect(refused.status?.refusal?.reason).toBe(
        `upgrade of worker-4 was not sent: image ${image} is not in the allowed list (${FACTORY}).`,
      );
      expect((await upgradesOf('worker-4')).count).toBe(before.count);
      expect(await env.unschedulable('worker-4')).toBe(false);
    },
  );

  it('a control-plane upgrade at the last margin needs the hazard ceremony: Refused without it, sent with it', async () => {
    const preflight = (ceremony: string) => ({
      takenAt: new Date().toISOString(),
      ceremony,
      quorum: { members: 3, quorum: 2, ready: 3, margin: 1 },
    });
    const cp1 = await upgradesOf('cp-1');
    await env.create('upgrade-cp1', 'cp-1', 'upgrade', {
      upgrade: { image: IMAGE },
      preflight: preflight('typed-name'),
    });
    const refused = await env.phaseIs('upgrade-cp1', 'Refused');
    expect(refused.status?.refusal?.reason).toMatch(/hazard ceremony/);
    expect((await upgradesOf('cp-1')).count).toBe(cp1.count);
    expect(await env.unschedulable('cp-1')).toBe(false);

    const cp2 = await upgradesOf('cp-2');
    await env.create('upgrade-cp2', 'cp-2', 'upgrade', {
      upgrade: { image: IMAGE },
      preflight: preflight('hazard'),
    });
    const complete = await env.phaseIs('upgrade-cp2', 'Complete', 90_000);
    expect(complete.status?.admission?.verdict).toBe('hazard');
    expect(complete.status?.upgrade?.cameBackOn).toBe(TARGET);
    const after = await upgradesOf('cp-2');
    expect(after.count).toBe(cp2.count + 1);
    expect(after.version).toBe(TARGET);
  });

  it('with stage: true, Talos reboots at once into the staged image: Complete on the target', async () => {
    const before = await upgradesOf('worker-6');
    const bootBefore = await bootIdOf('worker-6');
    await env.create('upgrade-w6-staged', 'worker-6', 'upgrade', {
      upgrade: { image: IMAGE, stage: true },
    });
    const complete = await env.phaseIs('upgrade-w6-staged', 'Complete', 90_000);
    expect(complete.status?.upgrade).toMatchObject({
      fromVersion: before.version,
      toVersion: TARGET,
      cameBackOn: TARGET,
    });
    const after = await upgradesOf('worker-6');
    expect(after.count).toBe(before.count + 1);
    expect(after.requests.at(-1)).toMatchObject({
      image: IMAGE,
      stage: true,
      result: 'installed',
      to: TARGET,
    });
    expect(await bootIdOf('worker-6')).not.toBe(bootBefore);
    // No reboot was asked besides the upgrade: the staged install needed none.
    expect((await rack.powerCounts('worker-6')).reboot).toBe(0);
  });

  it("is not done while Talos's Version and the Node's osImage disagree: it holds, then completes when they agree", async () => {
    const before = await upgradesOf('worker-4');
    expect(before.version).not.toBe(TARGET);
    const bootBefore = await bootIdOf('worker-4');
    // Talos keeps answering the old version while the Node will say the target.
    await rack.control(
      `/machines/${rack.uuidOf('worker-4')}/reported-version`,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ version: before.version }),
      },
    );
    await env.create('upgrade-w4-witnesses', 'worker-4', 'upgrade', {
      upgrade: { image: IMAGE },
    });
    const held = await env.waitFor(
      'upgrade-w4-witnesses holding on the two versions',
      async () => {
        const nm = await env.nms.get('upgrade-w4-witnesses');
        return (
          /waiting for its Node and Talos to agree/.test(
            nm.status?.message ?? '',
          ) && nm
        );
      },
      90_000,
    );
    expect(held.status?.phase).toBe('Rebooting');
    expect(held.status?.message).toMatch(
      new RegExp(
        `its Node's osImage says ${TARGET}, Talos reports ${before.version}$`,
      ),
    );
    // The machine is back, on the target by its Node, with a new boot: osImage alone would pass.
    expect(await osImageOf('worker-4')).toBe(`Talos (${TARGET})`);
    expect(await bootIdOf('worker-4')).not.toBe(bootBefore);
    expect(await env.isReady('worker-4')).toBe(true);
    expect(held.status?.upgrade?.cameBackOn).toBeUndefined();
    expect(await env.unschedulable('worker-4')).toBe(true);

    await rack.control(
      `/machines/${rack.uuidOf('worker-4')}/reported-version`,
      {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ version: '' }),
      },
    );
    const complete = await env.phaseIs(
      'upgrade-w4-witnesses',
      'Complete',
      60_000,
    );
    expect(complete.status?.upgrade?.cameBackOn).toBe(TARGET);
    expect(complete.status?.history?.map(h => h.phase)).not.toContain('Failed');
    expect((await upgradesOf('worker-4')).count).toBe(before.count + 1);
  });

  it('is sent once when the operator dies between the send and its record: the successor watches the node', async () => {
    const before = await upgradesOf('worker-5');
    await operator!.stop();
    let reached!: () => void;
    const atCrashPoint = new Promise<void>(resolve => {
      reached = resolve;
    });
    operator = await env.start({
      ...OPERATOR_OPTIONS,
      identity: 'doomed',
      beforeStatusWrite: async (name, phase) => {
        if (name === 'upgrade-w5' && phase === 'Rebooting') {
          reached();
          await new Promise(() => {}); // the process "dies" between the send and its record
        }
      },
    });
    await env.create('upgrade-w5', 'worker-5', 'upgrade', {
      upgrade: { image: IMAGE },
    });
    await atCrashPoint;
    const recorded = await env.nms.get('upgrade-w5');
    expect(recorded.status?.phase).toBe('Drained');
    expect(recorded.status?.power?.upgrade?.recordedAt).toBeDefined();
    expect(recorded.status?.power?.upgrade?.sentAt).toBeUndefined();
    expect((await upgradesOf('worker-5')).count).toBe(before.count + 1);
    await operator.stop();

    operator = await env.start({ ...OPERATOR_OPTIONS, identity: 'successor' });
    const complete = await env.phaseIs('upgrade-w5', 'Complete', 90_000);
    expect(complete.status?.power?.upgrade?.detail).toMatch(
      /no answer was recorded/,
    );
    expect(complete.status?.upgrade?.cameBackOn).toBe(TARGET);
    const after = await upgradesOf('worker-5');
    expect(after.count).toBe(before.count + 1);
    expect(after.version).toBe(TARGET);
  });
});
