/*
 * The upgrade rows (upgradeRows.ts) through the whole table and reconciler, on an
 * in-memory cluster: the checks before anything is sent, the send once, and the version
 * the node comes back on.
 */
import { ConflictError } from '@backstage/errors';
import {
  advertise,
  invoke,
  nodeFactsFromNode,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  type PowerProviderType,
  type UpgradeRequest,
} from '@rackside/plugin-servers-common';
import { testNode } from '../testing/nodes';
import {
  MaintenanceReconciler,
  Mutex,
  type ReconcilerPorts,
} from './reconciler';
import type { NodeView, PowerSendVerb, SendOutcome } from './types';

const FACTORY = 'factory.talos.dev/installer/';
const IMAGE = `${FACTORY}abc123:v1.12.0`;
const ACCEPTED_AT = new Date().toISOString();

function talosNode(
  name: string,
  opts: {
    cp?: boolean;
    version?: string;
    bootID?: string;
    ready?: boolean;
  } = {},
): NodeView {
  const base = testNode(name, { cp: opts.cp, ready: opts.ready });
  return {
    ...base,
    status: {
      ...base.status,
      nodeInfo: {
        bootID: opts.bootID ?? `boot-${name}-1`,
        osImage: `Talos (${opts.version ?? 'v1.11.3'})`,
      },
    },
  };
}

/** An in-memory cluster whose drains finish at once and whose channel is talos. */
class Cluster {
  nodes = new Map<string, NodeView>();
  maintenances = new Map<string, NodeMaintenance>();
  events: Array<{ type: string; reason: string; message: string }> = [];
  sent: Array<{ verb: PowerSendVerb; upgrade?: UpgradeRequest }> = [];
  writes: Array<string | undefined> = [];
  /** The causes counted in rackside_refusals_total. */
  refusals: string[] = [];
  channel: PowerProviderType = 'talos';
  prefixes: string[] = [FACTORY];
  sendOutcome: SendOutcome = {
    ok: true,
    receipt: { acceptedAt: ACCEPTED_AT, detail: 'upgrade accepted, actor u1' },
  };
  crashBefore?: string;
  /**
   * What each machine's Talos API answers for its version; absent: the version its
   * Node's osImage names (the two agree), an Error: Talos does not answer.
   */
  talosReports = new Map<string, string | Error>();
  /** The channel reads Talos versions (false: a port without talosVersion). */
  readsTalos = true;
  rv = 1;

  constructor(nodes: NodeView[]) {
    for (const n of nodes) this.nodes.set(n.metadata!.name!, n);
  }

  create(
    nodeName: string,
    upgrade: UpgradeRequest,
    extra: Partial<NodeMaintenance['spec']> = {},
  ): string {
    const name = `up-${nodeName}`;
    this.maintenances.set(name, {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'NodeMaintenance',
      metadata: { name, generation: 1, resourceVersion: String(this.rv++) },
      spec: {
        nodeName,
        intent: 'upgrade',
        reason: 'Talos 1.12',
        requestedBy: 'user:default/ops',
        upgrade,
        ...extra,
      },
    });
    return name;
  }

  get(name: string) {
    return this.maintenances.get(name)!;
  }

  /** The machine boots again: a new boot ID, on `version`. */
  boot(name: string, bootID: string, version: string) {
    const n = this.nodes.get(name)!;
    this.nodes.set(name, {
      ...n,
      status: {
        ...n.status,
        conditions: [{ type: 'Ready', status: 'True' }],
        nodeInfo: { bootID, osImage: `Talos (${version})` },
      },
    });
  }

  ports(): ReconcilerPorts {
    return {
      view: {
        maintenance: name => this.maintenances.get(name),
        maintenances: () => [...this.maintenances.values()],
        node: name => this.nodes.get(name),
        nodes: () => [...this.nodes.values()],
      },
      nodes: {
        setUnschedulable: async (name, unschedulable) => {
          const n = this.nodes.get(name)!;
          this.nodes.set(name, { ...n, spec: { unschedulable } });
        },
      },
      pods: { onNode: async () => [] },
      power: {
        check: (verb, n) =>
          invoke(
            advertise(this.channel, { attendedRack: false }),
            verb,
            n ? nodeFactsFromNode(n) : undefined,
          ),
        channelType: () => (this.channel === 'none' ? undefined : this.channel),
        powerState: async () => undefined,
        readback: () => undefined,
        talosVersion: this.readsTalos
          ? async n => {
              const reported = this.talosReports.get(n!.metadata!.name!);
              if (reported instanceof Error) throw reported;
              return (
                reported ??
                /\((v[^)]+)\)/.exec(n!.status!.nodeInfo!.osImage!)![1]
              );
            }
          : undefined,
        deadlines: {
          rebootSeconds: 900,
          unansweredSeconds: 300,
          upgradeSeconds: 1800,
        },
      },
      powerSend: {
        send: async (verb, _node, upgrade) => {
          this.sent.push({ verb, upgrade });
          return this.sendOutcome;
        },
      },
      drains: {
        ensure: () => ({
          state: 'drained',
          progress: { total: 0, evicted: 0, pending: 0 },
        }),
      },
      status: {
        write: async (nm, status: NodeMaintenanceStatus) => {
          if (this.crashBefore === status.phase) {
            this.crashBefore = undefined;
            throw new Error('crash');
          }
          const current = this.maintenances.get(nm.metadata.name)!;
          if (
            current.metadata.resourceVersion !== nm.metadata.resourceVersion
          ) {
            throw new ConflictError('conflict');
          }
          const next = {
            ...current,
            metadata: {
              ...current.metadata,
              resourceVersion: String(this.rv++),
            },
            status,
          };
          this.maintenances.set(nm.metadata.name, next);
          this.writes.push(status.phase);
          return next;
        },
        read: async name => this.maintenances.get(name),
      },
      events: {
        record: async (_nm, type, reason, message) => {
          this.events.push({ type, reason, message });
        },
      },
      admissionLock: new Mutex(),
      now: () => Date.now(),
      upgrades: { imagePrefixes: this.prefixes },
      onRefused: cause => this.refusals.push(cause),
    };
  }

  reconcile(name: string) {
    return new MaintenanceReconciler(this.ports()).reconcile(name);
  }
}

function rack() {
  return new Cluster([
    talosNode('cp-1', { cp: true }),
    talosNode('cp-2', { cp: true }),
    talosNode('cp-3', { cp: true }),
    talosNode('worker-1'),
    talosNode('worker-2', { version: 'v1.12.0' }),
  ]);
}

describe('intent upgrade', () => {
  it('drains like a reboot, records the upgrade before sending it once, and is Complete back on the target', async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    await c.reconcile(name);
    let nm = c.get(name);
    expect(nm.status?.phase).toBe('Rebooting');
    expect(c.sent).toEqual([{ verb: 'upgrade', upgrade: { image: IMAGE } }]);
    // Recorded (a Drained write with the record) before the answer moved it on.
    expect(c.writes).toEqual([
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'Drained',
      'Rebooting',
    ]);
    expect(nm.status?.power?.upgrade).toMatchObject({
      channel: 'talos',
      sentAt: ACCEPTED_AT,
    });
    expect(nm.status?.upgrade).toEqual({
      image: IMAGE,
      fromVersion: 'v1.11.3',
      toVersion: 'v1.12.0',
      sentAt: ACCEPTED_AT,
    });
    expect(nm.status?.bootIdBefore).toBe('boot-worker-1-1');
    // Still answering on the old boot while the installer runs: waits.
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Rebooting');
    c.boot('worker-1', 'boot-worker-1-2', 'v1.12.0');
    await c.reconcile(name);
    nm = c.get(name);
    expect(nm.status?.phase).toBe('Complete');
    expect(nm.status?.upgrade?.cameBackOn).toBe('v1.12.0');
    expect(nm.status?.history?.map(h => h.message)).toContainEqual(
      'worker-1 is back on v1.12.0 (was v1.11.3): Ready with boot ID boot-worker-1-2, its Node and Talos both report v1.12.0',
    );
    expect(c.sent).toHaveLength(1);
  });

  it('is Failed, named as a rollback, when the node comes back on the old version', async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    await c.reconcile(name);
    c.boot('worker-1', 'boot-worker-1-2', 'v1.11.3');
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Failed');
    expect(nm.status?.message).toBe(
      'worker-1 came back on v1.11.3, not v1.12.0 (Talos rolled the upgrade back). The node is left cordoned.',
    );
    expect(nm.status?.upgrade?.cameBackOn).toBe('v1.11.3');
    expect(c.events.at(-1)).toMatchObject({
      type: 'Warning',
      reason: 'UpgradeFailed',
    });
    expect(c.nodes.get('worker-1')!.spec?.unschedulable).toBe(true);
  });

  it('is Failed when the node is not back on the target by the upgrade deadline, and never sends again', async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Rebooting');
    const waited = await c.reconcile(name);
    expect(waited.requeueAfterMs).toBeGreaterThan(1_700_000);
    // Half an hour later (upgradeSeconds 1800), still on the boot from before.
    const late = c.ports();
    late.now = () => Date.now() + 1801 * 1000;
    await new MaintenanceReconciler(late).reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Failed');
    expect(nm.status?.message).toBe(
      'worker-1 did not come back on v1.12.0 within 1800s of the upgrade (Ready, but with the boot ID from before). The node is left cordoned.',
    );
    expect(c.sent).toHaveLength(1);
  });

  it('refuses at admission a node already at the target, touching nothing', async () => {
    const c = rack();
    const name = c.create('worker-2', { image: IMAGE });
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal?.reason).toBe(
      'upgrade of worker-2 was not sent: already at v1.12.0.',
    );
    expect(c.sent).toEqual([]);
    expect(c.refusals).toEqual(['upgrade']);
    expect(c.nodes.get('worker-2')!.spec?.unschedulable).toBeUndefined();
  });

  it('refuses at send a node that reached the target while it drained', async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    const ports = c.ports();
    ports.powerSend = {
      send: async () => {
        throw new Error('an upgrade was sent');
      },
    };
    // The node reaches the target (upgraded by hand) while it drains.
    const drained = ports.drains.ensure;
    ports.drains.ensure = nm => {
      c.boot('worker-1', 'boot-worker-1-1', 'v1.12.0');
      return drained(nm);
    };
    await new MaintenanceReconciler(ports).reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal?.reason).toBe(
      'upgrade of worker-1 was not sent: already at v1.12.0. The node is left cordoned and drained; return it to service to bring it back.',
    );
    expect(nm.status?.power?.upgrade).toBeUndefined();
  });

  it.each([
    ['outside the allowed list', 'evil.example/installer:v1.12.0', [FACTORY]],
    [
      'on a registry that only starts like the allowed one',
      'factory.talos.dev.evil.example/installer/abc:v1.12.0',
      [FACTORY],
    ],
    ['with no prefix allowed at all', IMAGE, []],
  ])('refuses an image %s, sending nothing', async (_what, image, prefixes) => {
    const c = rack();
    c.prefixes = prefixes;
    const name = c.create('worker-1', { image });
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.refusal?.reason).toMatch(
      new RegExp(
        `^upgrade of worker-1 was not sent: image ${image.replace(
          /\./g,
          '\\.',
        )} is not in the allowed list`,
      ),
    );
    expect(c.sent).toEqual([]);
    expect(c.refusals).toEqual(['upgrade']);
  });

  it('refuses an upgrade on a channel that is not talos', async () => {
    const c = rack();
    c.channel = 'redfish';
    const name = c.create('worker-1', { image: IMAGE });
    await c.reconcile(name);
    expect(c.get(name).status?.refusal?.reason).toBe(
      "upgrade of worker-1 was not sent: a Talos upgrade goes over the talos power channel, and this deployment's is redfish.",
    );
    expect(c.sent).toEqual([]);
    expect(c.refusals).toEqual(['capability']);
  });

  it('refuses force without the hazard rung, and sends it with it', async () => {
    const c = rack();
    const refused = c.create('worker-1', { image: IMAGE, force: true });
    await c.reconcile(refused);
    expect(c.get(refused).status?.phase).toBe('Refused');
    expect(c.get(refused).status?.refusal?.reason).toMatch(
      /force skips Talos's etcd health check and is taken only with the hazard ceremony.*no rung/,
    );
    expect(c.sent).toEqual([]);

    const c2 = rack();
    const taken = c2.create(
      'worker-1',
      { image: IMAGE, force: true },
      {
        preflight: { takenAt: ACCEPTED_AT, ceremony: 'hazard' },
      },
    );
    await c2.reconcile(taken);
    expect(c2.get(taken).status?.phase).toBe('Rebooting');
    expect(c2.sent).toEqual([
      { verb: 'upgrade', upgrade: { image: IMAGE, force: true } },
    ]);
  });

  it('a control-plane upgrade at the last margin needs the hazard ceremony, as a reboot does', async () => {
    const c = rack();
    const name = c.create(
      'cp-1',
      { image: IMAGE },
      { preflight: { takenAt: ACCEPTED_AT, ceremony: 'typed-name' } },
    );
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Refused');
    expect(c.get(name).status?.refusal?.reason).toMatch(/hazard ceremony/);
    expect(c.sent).toEqual([]);
  });

  it('never sends twice: an upgrade recorded without an answer is settled by the node coming back', async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    c.crashBefore = 'Rebooting';
    await expect(c.reconcile(name)).rejects.toThrow('crash');
    expect(c.sent).toHaveLength(1);
    expect(c.get(name).status?.phase).toBe('Drained');
    expect(c.get(name).status?.power?.upgrade?.sentAt).toBeUndefined();
    // A new process: no sign yet, it waits without sending.
    const waited = await c.reconcile(name);
    expect(waited.requeueAfterMs).toBeGreaterThan(0);
    expect(c.sent).toHaveLength(1);
    c.boot('worker-1', 'boot-worker-1-2', 'v1.12.0');
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Complete');
    expect(c.sent).toHaveLength(1);
  });
});

/** Reconciles as if `seconds` had passed since now (the upgrade deadline is 1800 s). */
function reconcileLater(c: Cluster, name: string, seconds: number) {
  const late = c.ports();
  late.now = () => Date.now() + seconds * 1000;
  return new MaintenanceReconciler(late).reconcile(name);
}

describe('an upgrade is judged by the Node and by Talos together', () => {
  it('both report the target: Returning, then Complete', async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    await c.reconcile(name);
    c.boot('worker-1', 'boot-worker-1-2', 'v1.12.0');
    c.talosReports.set('worker-1', 'v1.12.0');
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Complete');
    expect(c.get(name).status?.upgrade?.cameBackOn).toBe('v1.12.0');
  });

  it('both report the old version: Failed, named as a rollback', async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    await c.reconcile(name);
    c.boot('worker-1', 'boot-worker-1-2', 'v1.11.3');
    c.talosReports.set('worker-1', 'v1.11.3');
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Failed');
    expect(c.get(name).status?.message).toBe(
      'worker-1 came back on v1.11.3, not v1.12.0 (Talos rolled the upgrade back). The node is left cordoned.',
    );
  });

  it.each([
    ['the Node says the target, Talos the old version', 'v1.12.0', 'v1.11.3'],
    ['Talos says the target, the Node the old version', 'v1.11.3', 'v1.12.0'],
    ['Talos says the target, the Node another version', 'v1.11.4', 'v1.12.0'],
  ])(
    '%s: holds, says so, and fails at the deadline naming both',
    async (_case, byNode, byTalos) => {
      const c = rack();
      const name = c.create('worker-1', { image: IMAGE });
      await c.reconcile(name);
      c.boot('worker-1', 'boot-worker-1-2', byNode);
      c.talosReports.set('worker-1', byTalos);
      const held = await c.reconcile(name);
      let nm = c.get(name);
      expect(nm.status?.phase).toBe('Rebooting');
      expect(nm.status?.message).toBe(
        `worker-1 is back with boot ID boot-worker-1-2; waiting for its Node and Talos to agree on v1.12.0: its Node's osImage says ${byNode}, Talos reports ${byTalos}`,
      );
      expect(nm.status?.upgrade?.cameBackOn).toBeUndefined();
      // Asked again soon: nothing else wakes it when only Talos changes.
      expect(held.requeueAfterMs).toBe(5_000);
      // Asked again, nothing new: no write.
      const writes = c.writes.length;
      await c.reconcile(name);
      expect(c.writes).toHaveLength(writes);
      expect(c.get(name).status?.phase).toBe('Rebooting');

      await reconcileLater(c, name, 1801);
      nm = c.get(name);
      expect(nm.status?.phase).toBe('Failed');
      expect(nm.status?.message).toBe(
        `worker-1 came back with boot ID boot-worker-1-2, but its versions did not agree on v1.12.0 within 1800s of the upgrade: its Node's osImage says ${byNode}, Talos reports ${byTalos}. The node is left cordoned.`,
      );
      expect(c.events.at(-1)).toMatchObject({
        type: 'Warning',
        reason: 'UpgradeFailed',
      });
      expect(c.sent).toHaveLength(1);
    },
  );

  it('disagreeing, then agreeing on the target: Complete', async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    await c.reconcile(name);
    c.boot('worker-1', 'boot-worker-1-2', 'v1.12.0');
    c.talosReports.set('worker-1', 'v1.11.3');
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Rebooting');
    c.talosReports.delete('worker-1');
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Complete');
  });

  it('a Node on the target whose osImage names no version is not judged on Talos alone', async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    await c.reconcile(name);
    c.boot('worker-1', 'boot-worker-1-2', 'v1.12.0');
    const n = c.nodes.get('worker-1')!;
    c.nodes.set('worker-1', {
      ...n,
      status: {
        ...n.status,
        nodeInfo: { bootID: 'boot-worker-1-2', osImage: 'Talos' },
      },
    });
    c.talosReports.set('worker-1', 'v1.12.0');
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Rebooting');
    expect(c.get(name).status?.message).toMatch(
      /its Node's osImage says no version \(osImage "Talos"\), Talos reports v1\.12\.0$/,
    );
  });

  it.each([
    [
      'Talos does not answer',
      (c: Cluster) =>
        c.talosReports.set(
          'worker-1',
          new Error(
            'talos: read the Talos version of node worker-1 at 10.0.0.21:50000 failed: UNAVAILABLE: No connection established',
          ),
        ),
      'talos: read the Talos version of node worker-1 at 10.0.0.21:50000 failed: UNAVAILABLE: No connection established',
    ],
    [
      'the channel reads no Talos version',
      (c: Cluster) => {
        c.readsTalos = false;
      },
      'the power channel reads no Talos version',
    ],
  ])(
    '%s: never Done on the osImage alone; Failed at the deadline saying Talos did not answer',
    async (_case, blind, why) => {
      const c = rack();
      const name = c.create('worker-1', { image: IMAGE });
      await c.reconcile(name);
      c.boot('worker-1', 'boot-worker-1-2', 'v1.12.0');
      blind(c);
      await c.reconcile(name);
      let nm = c.get(name);
      expect(nm.status?.phase).toBe('Rebooting');
      expect(nm.status?.message).toBe(
        `worker-1 is back with boot ID boot-worker-1-2; waiting for its Node and Talos to agree on v1.12.0: its Node's osImage says v1.12.0, and Talos did not answer its version (${why})`,
      );
      await reconcileLater(c, name, 1801);
      nm = c.get(name);
      expect(nm.status?.phase).toBe('Failed');
      expect(nm.status?.message).toBe(
        `worker-1 came back with boot ID boot-worker-1-2, but Talos did not answer its version within 1800s of the upgrade, so it cannot be judged on v1.12.0: its Node's osImage says v1.12.0, and Talos did not answer its version (${why}). The node is left cordoned.`,
      );
      expect(nm.status?.upgrade?.cameBackOn).toBeUndefined();
    },
  );

  it("quotes at most 300 characters of Talos's error", async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    await c.reconcile(name);
    c.boot('worker-1', 'boot-worker-1-2', 'v1.12.0');
    c.talosReports.set('worker-1', new Error('x'.repeat(100_000)));
    await c.reconcile(name);
    expect(c.get(name).status?.message).toMatch(/\(x{300}\)$/);
  });
});

describe("the operator's own node (docs/upgrades.md)", () => {
  /** The reconciler of the replica on `own`, whose handovers are counted. */
  function replicaOn(c: Cluster, own: string) {
    const handovers: string[] = [];
    const reconciler = new MaintenanceReconciler({
      ...c.ports(),
      ownNode: {
        name: own,
        handOver: async reason => {
          handovers.push(reason);
        },
      },
    });
    return {
      handovers,
      reconcile: (name: string) => reconciler.reconcile(name),
    };
  }

  it('the leader on the node records and sends nothing: it hands the Lease over, and the peer that takes it sends once', async () => {
    const c = rack();
    const name = c.create('worker-1', { image: IMAGE });
    const onWorker1 = replicaOn(c, 'worker-1');
    await onWorker1.reconcile(name);
    let nm = c.get(name);
    expect(onWorker1.handovers).toEqual([
      'upgrade of worker-1: this operator replica runs on worker-1, so it hands the Lease over and another replica sends it',
    ]);
    expect(c.sent).toEqual([]);
    expect(nm.status?.phase).toBe('Drained');
    expect(nm.status?.power?.upgrade).toBeUndefined();
    expect(nm.status?.upgrade).toBeUndefined();
    expect(c.events.map(e => e.reason)).toContain('LeaderHandover');

    // The peer on another node reconciles the same maintenance from Drained.
    const onWorker2 = replicaOn(c, 'worker-2');
    await onWorker2.reconcile(name);
    nm = c.get(name);
    expect(onWorker2.handovers).toEqual([]);
    expect(c.sent).toEqual([{ verb: 'upgrade', upgrade: { image: IMAGE } }]);
    expect(nm.status?.phase).toBe('Rebooting');
    expect(nm.status?.power?.upgrade?.sentAt).toBe(ACCEPTED_AT);
  });

  it('a reboot of its own node is handed over too; a verb for another node is sent at once', async () => {
    const c = rack();
    const reboot = 'rb-worker-1';
    c.maintenances.set(reboot, {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'NodeMaintenance',
      metadata: { name: reboot, generation: 1, resourceVersion: '1' },
      spec: {
        nodeName: 'worker-1',
        intent: 'reboot',
        reason: 'kernel',
        requestedBy: 'user:default/ops',
      },
    });
    const onWorker1 = replicaOn(c, 'worker-1');
    await onWorker1.reconcile(reboot);
    expect(onWorker1.handovers).toHaveLength(1);
    expect(c.get(reboot).status?.power?.reboot).toBeUndefined();
    expect(c.sent).toEqual([]);

    const other = c.create('cp-1', { image: IMAGE });
    const onWorker2 = replicaOn(c, 'worker-2');
    await onWorker2.reconcile(other);
    expect(onWorker2.handovers).toEqual([]);
    expect(c.sent.map(s => s.verb)).toEqual(['upgrade']);
  });
});
