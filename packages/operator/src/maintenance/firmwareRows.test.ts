/*
 * The firmware rows (firmwareRows.ts) through the whole table and reconciler, on an
 * in-memory cluster with a fake BMC: the checks before anything is sent (attacks first),
 * the send once, the task followed, the reset it asks for, and the versions judged.
 */
import { ConflictError } from '@backstage/errors';
import {
  advertise,
  invoke,
  invokeFirmware,
  nodeFactsFromNode,
  type FirmwareComponent,
  type FirmwareHistoryEntry,
  type FirmwareRequest,
  type NodeMaintenance,
  type NodeMaintenanceStatus,
  type PowerProviderType,
} from '@rackside/plugin-servers-common';
import type { FirmwareTaskReading } from '@rackside/plugin-servers-node';
import { testNode } from '../testing/nodes';
import { judgeVersions } from './firmwareRows';
import {
  MaintenanceReconciler,
  Mutex,
  type ReconcilerPorts,
} from './reconciler';
import type {
  ChecksumReading,
  NodeView,
  PowerSendVerb,
  SendOutcome,
} from './types';

const SOURCE = 'https://fw.example.com';
const IMAGE = `${SOURCE}/bios-2.5.0.bin`;
const BIOS = '/redfish/v1/UpdateService/FirmwareInventory/BIOS';
const BMC = '/redfish/v1/UpdateService/FirmwareInventory/BMC';
const MONITOR = '/redfish/v1/TaskService/TaskMonitors/1';
const ACCEPTED_AT = new Date().toISOString();

function node(name: string, cp = false): NodeView {
  const bootID = `boot-${name}-1`;
  const base = testNode(name, { cp });
  return { ...base, status: { ...base.status, nodeInfo: { bootID } } };
}

const running = (percent: number): FirmwareTaskReading => ({
  state: 'Running',
  finished: false,
  failed: false,
  percent,
  messages: [],
  resetRequired: false,
});
const completed = (resetRequired = false): FirmwareTaskReading => ({
  state: 'Completed',
  finished: true,
  failed: false,
  percent: 100,
  messages: resetRequired ? ['A reset is required.'] : [],
  resetRequired,
});

/** An in-memory cluster whose drains finish at once and whose channel is redfish. */
class Cluster {
  nodes = new Map<string, NodeView>();
  maintenances = new Map<string, NodeMaintenance>();
  sent: Array<{ verb: PowerSendVerb; firmware?: FirmwareRequest }> = [];
  writes: Array<string | undefined> = [];
  refusals: string[] = [];
  channel: PowerProviderType = 'redfish';
  sources: string[] = [SOURCE];
  /** The fake BMC. */
  updateService = true;
  inventory: FirmwareComponent[] = [
    { id: BIOS, name: 'Rack BIOS', version: '2.4.1' },
    { id: BMC, name: 'Rack BMC', version: '1.12.0' },
  ];
  task: FirmwareTaskReading = running(10);
  taskReads = 0;
  sendOutcome: SendOutcome = {
    ok: true,
    receipt: {
      acceptedAt: ACCEPTED_AT,
      detail: 'SimpleUpdate accepted (HTTP 202)',
      taskUri: MONITOR,
    },
  };
  /** The BMC's last health reading (its ServerBMC's status.health.firmware). */
  healthReading?: Array<{ id?: string; name: string; version: string }>;
  /** Sources whose images are sent only with a checksum. */
  checksumRequired: string[] = [];
  /** What the operator's own fetch of the image hashes to. */
  imageChecksum = `sha256:${'0'.repeat(64)}`;
  /** What the background fetch says now; absent: read, imageChecksum. */
  checksumReading?: ChecksumReading;
  checksumFetches: string[] = [];
  /** The ServerBMCs' firmware history. */
  history = new Map<string, FirmwareHistoryEntry[]>();
  historyWrites = 0;
  rv = 1;
  /** Added to the clock: how far the test has moved time on. */
  later = 0;

  constructor(nodes: NodeView[]) {
    for (const n of nodes) this.nodes.set(n.metadata!.name!, n);
  }

  create(nodeName: string, firmware: FirmwareRequest): string {
    const name = `fw-${nodeName}`;
    this.maintenances.set(name, {
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'NodeMaintenance',
      metadata: {
        name,
        uid: `uid-${name}`,
        generation: 1,
        resourceVersion: String(this.rv++),
      },
      spec: {
        nodeName,
        intent: 'firmware',
        reason: 'BIOS 2.5.0',
        requestedBy: 'kube:admin',
        firmware,
      },
    });
    return name;
  }

  get(name: string) {
    return this.maintenances.get(name)!;
  }

  setVersion(id: string, version: string) {
    this.inventory = this.inventory.map(c =>
      c.id === id ? { ...c, version } : c,
    );
  }

  boot(name: string, bootID: string) {
    const n = this.nodes.get(name)!;
    this.nodes.set(name, {
      ...n,
      status: {
        ...n.status,
        conditions: [{ type: 'Ready', status: 'True' }],
        nodeInfo: { bootID },
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
        firmwareReading: () => this.healthReading,
      },
      firmwareHistory: {
        read: n => this.history.get(n),
        write: async (n, next) => {
          this.historyWrites++;
          this.history.set(n, next);
        },
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
        checkFirmware: (n, updateService) =>
          invokeFirmware(
            advertise(this.channel, { attendedRack: false }),
            n ? nodeFactsFromNode(n) : undefined,
            { updateService },
          ),
        channelType: () => (this.channel === 'none' ? undefined : this.channel),
        powerState: async () => undefined,
        readback: () => undefined,
        firmware: {
          offered: async () => this.updateService,
          inventory: async () => this.inventory.map(c => ({ ...c })),
          task: async (_n, uri) => {
            expect(uri).toBe(MONITOR);
            this.taskReads++;
            return this.task;
          },
          checksum: uri => {
            this.checksumFetches.push(uri);
            return (
              this.checksumReading ?? {
                state: 'read',
                checksum: this.imageChecksum,
              }
            );
          },
        },
        deadlines: { rebootSeconds: 900, unansweredSeconds: 300 },
      },
      powerSend: {
        send: async (verb, _node, _upgrade, firmware) => {
          this.sent.push({ verb, ...(firmware ? { firmware } : {}) });
          if (verb === 'reboot') {
            return {
              ok: true,
              receipt: {
                acceptedAt: ACCEPTED_AT,
                detail: 'ResetType ForceRestart',
              },
            };
          }
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
      events: { record: async () => undefined },
      admissionLock: new Mutex(),
      now: () => Date.now() + this.later,
      upgrades: {
        imagePrefixes: [],
        firmwareSources: this.sources,
        firmwareChecksumRequired: this.checksumRequired,
      },
      onRefused: cause => this.refusals.push(cause),
    };
  }

  reconcile(name: string) {
    return new MaintenanceReconciler(this.ports()).reconcile(name);
  }
}

function rack() {
  return new Cluster([
    node('cp-1', true),
    node('cp-2', true),
    node('cp-3', true),
    node('worker-1'),
    node('worker-2'),
  ]);
}

describe('intent firmware: refused before anything is sent', () => {
  it.each([
    ['a source outside the list', 'https://evil.example/bios-2.5.0.bin'],
    ['a look-alike host', 'https://fw.example.com.evil.example/bios-2.5.0.bin'],
    [
      'user info in front of the allowed host',
      'https://fw.example.com@evil.example/b-2.5.0.bin',
    ],
    [
      'plain http from the allowed host',
      'http://fw.example.com/bios-2.5.0.bin',
    ],
    [
      'another port on the allowed host',
      'https://fw.example.com:8443/bios-2.5.0.bin',
    ],
  ])(
    '%s, written with kubectl: Refused at admission, the node untouched',
    async (_, imageURI) => {
      const c = rack();
      const name = c.create('worker-1', { imageURI });
      await c.reconcile(name);
      const nm = c.get(name);
      expect(nm.status?.phase).toBe('Refused');
      expect(nm.status?.message).toMatch(
        /firmware update of worker-1 was not sent: the firmware image URI .* (is not from an allowed firmware source|is refused)/,
      );
      expect(c.sent).toEqual([]);
      expect(c.nodes.get('worker-1')?.spec?.unschedulable).toBeFalsy();
      expect(c.refusals).toEqual(['capability']);
    },
  );

  it('every source, when none is configured', async () => {
    const c = rack();
    c.sources = [];
    const name = c.create('worker-1', { imageURI: IMAGE });
    await c.reconcile(name);
    expect(c.get(name).status?.message).toMatch(
      /no firmware sources are allowed/,
    );
    expect(c.sent).toEqual([]);
  });

  it('a channel that is not redfish', async () => {
    const c = rack();
    c.channel = 'talos';
    const name = c.create('worker-1', { imageURI: IMAGE });
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Refused');
    expect(c.get(name).status?.message).toMatch(/power channel is talos/);
    expect(c.sent).toEqual([]);
  });

  it('a BMC without an UpdateService: Refused once drained, nothing sent', async () => {
    const c = rack();
    c.updateService = false;
    const name = c.create('worker-1', { imageURI: IMAGE });
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Refused');
    expect(c.get(name).status?.message).toMatch(
      /offers no Redfish UpdateService/,
    );
    expect(c.sent).toEqual([]);
  });

  it('the sources are checked again at the moment of sending', async () => {
    const c = rack();
    const name = c.create('worker-1', { imageURI: IMAGE });
    // Admitted and drained under one list, sent under another (the operator restarted).
    const ports = c.ports();
    const reconciler = new MaintenanceReconciler({
      ...ports,
      drains: {
        ensure: () =>
          ({
            state: 'running',
            progress: { total: 1, evicted: 0, pending: 1 },
          } as never),
      },
    });
    await reconciler.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Draining');
    c.sources = ['https://other.example.com'];
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Refused');
    expect(c.sent).toEqual([]);
  });
});

describe('intent firmware: sent once and followed', () => {
  it('records the inventory and the update before sending it once, follows the task, and is Complete on the new version', async () => {
    const c = rack();
    const firmware: FirmwareRequest = { imageURI: IMAGE, targets: [BIOS] };
    const name = c.create('worker-1', firmware);
    await c.reconcile(name);
    let nm = c.get(name);
    expect(c.sent).toEqual([{ verb: 'firmware', firmware }]);
    // Recorded (a Drained write with the record), then the answer, then the task's state.
    expect(c.writes).toEqual([
      'Requested',
      'Cordoned',
      'Draining',
      'Drained',
      'Drained',
      'Drained',
      'Drained',
    ]);
    expect(nm.status?.phase).toBe('Drained');
    expect(nm.status?.power?.firmware).toMatchObject({
      channel: 'redfish',
      sentAt: ACCEPTED_AT,
    });
    expect(nm.status?.firmware).toMatchObject({
      before: [
        { id: BIOS, name: 'Rack BIOS', version: '2.4.1' },
        { id: BMC, name: 'Rack BMC', version: '1.12.0' },
      ],
      taskUri: MONITOR,
      taskState: 'Running',
      percent: 10,
    });
    // Running, a little further: a requeue, no write.
    c.task = running(12);
    const writes = c.writes.length;
    await c.reconcile(name);
    expect(c.writes.length).toBe(writes);
    c.task = running(60);
    await c.reconcile(name);
    expect(c.get(name).status?.firmware?.percent).toBe(60);
    // Completed (Immediate): applied at once.
    c.task = completed();
    c.setVersion(BIOS, '2.5.0');
    await c.reconcile(name);
    nm = c.get(name);
    expect(nm.status?.phase).toBe('Complete');
    expect(nm.status?.firmware?.after).toEqual([
      { id: BIOS, name: 'Rack BIOS', version: '2.5.0' },
      { id: BMC, name: 'Rack BMC', version: '1.12.0' },
    ]);
    expect(nm.status?.history?.map(h => h.message)).toContainEqual(
      'firmware of worker-1 updated: Rack BIOS 2.4.1 -> 2.5.0',
    );
    expect(c.sent).toHaveLength(1);
  });

  it('sends the reset the BMC asks for once, through the reboot record, and judges after the boot', async () => {
    const c = rack();
    const firmware: FirmwareRequest = {
      imageURI: IMAGE,
      targets: ['BIOS'],
      applyTime: 'OnReset',
    };
    const name = c.create('worker-1', firmware);
    await c.reconcile(name);
    c.task = completed(true);
    await c.reconcile(name);
    let nm = c.get(name);
    expect(nm.status?.phase).toBe('Rebooting');
    expect(c.sent.map(s => s.verb)).toEqual(['firmware', 'reboot']);
    expect(nm.status?.power?.reboot?.sentAt).toBe(ACCEPTED_AT);
    expect(nm.status?.bootIdBefore).toBe('boot-worker-1-1');
    // Not back yet: waits, nothing sent again.
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Rebooting');
    c.setVersion(BIOS, '2.5.0');
    c.boot('worker-1', 'boot-worker-1-2');
    await c.reconcile(name);
    nm = c.get(name);
    expect(nm.status?.phase).toBe('Complete');
    expect(nm.status?.firmware?.after?.[0].version).toBe('2.5.0');
    expect(c.sent.map(s => s.verb)).toEqual(['firmware', 'reboot']);
  });

  it('a failed task is Failed with the BMC message', async () => {
    const c = rack();
    const name = c.create('worker-1', { imageURI: IMAGE });
    await c.reconcile(name);
    c.task = {
      state: 'Exception',
      finished: true,
      failed: true,
      messages: ['The image is corrupt.'],
      resetRequired: false,
    };
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Failed');
    expect(nm.status?.message).toBe(
      'the firmware task of worker-1 ended Exception: The image is corrupt.. The node is left cordoned.',
    );
    expect(nm.status?.firmware?.messages).toEqual(['The image is corrupt.']);
    expect(c.nodes.get('worker-1')?.spec?.unschedulable).toBe(true);
    expect(c.sent).toHaveLength(1);
  });

  it('a completed task whose version did not change is Failed, naming it', async () => {
    const c = rack();
    const name = c.create('worker-1', { imageURI: IMAGE, targets: [BIOS] });
    await c.reconcile(name);
    c.task = completed();
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Failed');
    expect(nm.status?.message).toBe(
      'firmware update of worker-1 did not apply: the FirmwareInventory reports no new version: Rack BIOS still 2.4.1. The node is left cordoned.',
    );
    expect(nm.status?.firmware?.after).toBeDefined();
  });

  it('an update whose answer was lost is never sent again', async () => {
    const c = rack();
    c.sendOutcome = {
      ok: false,
      outcome: 'unknown',
      message: 'socket hang up',
    };
    const name = c.create('worker-1', { imageURI: IMAGE });
    await c.reconcile(name);
    // The BMC may still be applying it: the inventory is read again, nothing resent.
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Drained');
    expect(c.get(name).status?.power?.firmware?.error).toBe('socket hang up');
    // Past the deadline without a new version: Failed, saying it was not resent.
    c.later = 3601 * 1000;
    await c.reconcile(name);
    const nm = c.get(name);
    expect(c.sent).toHaveLength(1);
    expect(nm.status?.phase).toBe('Failed');
    expect(nm.status?.message).toMatch(
      /no answer of the BMC was recorded, and the FirmwareInventory reports no new version for any component after 3600s\. It is not sent again/,
    );
  });

  it('an update whose answer was lost goes on once the inventory reports the new version', async () => {
    const c = rack();
    c.sendOutcome = {
      ok: false,
      outcome: 'unknown',
      message: 'socket hang up',
    };
    const name = c.create('worker-1', { imageURI: IMAGE, targets: [BIOS] });
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Drained');
    c.setVersion(BIOS, '2.5.0');
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Complete');
    expect(c.sent).toHaveLength(1);
  });

  it('a BMC that refuses the update is Failed with its message, not retried', async () => {
    const c = rack();
    c.sendOutcome = {
      ok: false,
      outcome: 'refused',
      message: 'POST answered 400 Bad Request: ImageURI is not https',
    };
    const name = c.create('worker-1', { imageURI: IMAGE });
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Failed');
    expect(nm.status?.message).toMatch(
      /firmware update of worker-1 was refused by the channel: POST answered 400 Bad Request: ImageURI is not https/,
    );
    expect(c.sent).toHaveLength(1);
  });
});

describe('judgeVersions', () => {
  const before = [
    { id: BIOS, name: 'Rack BIOS', version: '2.4.1' },
    { id: BMC, name: 'Rack BMC', version: '1.12.0' },
  ];
  const bios = (version: string) => [
    { id: BIOS, name: 'Rack BIOS', version },
    { id: BMC, name: 'Rack BMC', version: '1.12.0' },
  ];

  it.each([
    [
      'a target that is not in the inventory is not applied',
      bios('2.5.0'),
      ['/redfish/v1/UpdateService/FirmwareInventory/NIC'],
      {
        changed: false,
        text: 'the FirmwareInventory has no /redfish/v1/UpdateService/FirmwareInventory/NIC',
      },
    ],
    [
      'one targeted component unchanged fails the whole update',
      bios('2.5.0'),
      [BIOS, BMC],
      {
        changed: false,
        text: 'the FirmwareInventory reports no new version: Rack BMC still 1.12.0',
      },
    ],
    [
      'an inventory that lost every component is not applied',
      [],
      undefined,
      {
        changed: false,
        text: 'the FirmwareInventory reports no new version for any component',
      },
    ],
    [
      'a target named by its Id',
      bios('2.5.0'),
      ['BIOS'],
      { changed: true, text: 'Rack BIOS 2.4.1 -> 2.5.0' },
    ],
    [
      'no targets: any component that changed',
      bios('2.5.0'),
      undefined,
      { changed: true, text: 'Rack BIOS 2.4.1 -> 2.5.0' },
    ],
  ])('%s', (_, after, targets, expected) => {
    expect(judgeVersions(before, after, targets)).toEqual(expected);
  });
});

describe('intent firmware: a target version', () => {
  it('is Refused at admission when the last health reading already reports it for the targets: nothing drained', async () => {
    const c = rack();
    c.healthReading = [
      { id: BIOS, name: 'Rack BIOS', version: '2.5.0' },
      { id: BMC, name: 'Rack BMC', version: '1.12.0' },
    ];
    const name = c.create('worker-1', {
      imageURI: IMAGE,
      targets: [BIOS],
      version: '2.5.0',
    });
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.message).toMatch(
      /firmware update of worker-1 refused: already at 2\.5\.0 \(the BMC's last health reading/,
    );
    expect(c.nodes.get('worker-1')?.spec?.unschedulable).toBeFalsy();
    expect(c.sent).toEqual([]);
    expect(c.refusals).toEqual(['upgrade']);
  });

  it('is Refused before sending when the inventory read at that moment already reports it (the health reading was old)', async () => {
    const c = rack();
    c.healthReading = [{ id: BIOS, name: 'Rack BIOS', version: '2.4.1' }];
    c.setVersion(BIOS, '2.5.0');
    const name = c.create('worker-1', {
      imageURI: IMAGE,
      targets: ['BIOS'],
      version: '2.5.0',
    });
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.message).toMatch(
      /already at 2\.5\.0 \(the BMC's FirmwareInventory/,
    );
    expect(nm.status?.power?.firmware).toBeUndefined();
    expect(c.sent).toEqual([]);
  });

  it('is Complete only on the version asked; another new version is Failed naming both', async () => {
    const c = rack();
    const name = c.create('worker-1', {
      imageURI: IMAGE,
      targets: [BIOS],
      version: '2.5.0',
    });
    await c.reconcile(name);
    c.task = completed();
    c.setVersion(BIOS, '2.4.9');
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Failed');
    expect(nm.status?.message).toMatch(
      /firmware update of worker-1 did not reach 2\.5\.0: Rack BIOS 2\.4\.1 -> 2\.4\.9, not 2\.5\.0/,
    );
    expect(c.sent).toHaveLength(1);
  });

  it('without targets, the components that changed must report it', async () => {
    const c = rack();
    const name = c.create('worker-1', { imageURI: IMAGE, version: '2.5.0' });
    await c.reconcile(name);
    c.task = completed();
    c.setVersion(BIOS, '2.5.0');
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Complete');
  });

  it('judgeVersions without a version counts any new version, as before', () => {
    const before = [{ id: BIOS, name: 'Rack BIOS', version: '2.4.1' }];
    const after = [{ id: BIOS, name: 'Rack BIOS', version: '2.4.9' }];
    expect(judgeVersions(before, after, [BIOS]).changed).toBe(true);
    expect(judgeVersions(before, after, [BIOS], '2.5.0')).toMatchObject({
      changed: false,
      otherVersion: true,
    });
  });
});

describe('intent firmware: a checksum', () => {
  const checksum = `sha256:${'ab'.repeat(32)}`;

  it('a source requiring one, and a request without: Refused at admission, nothing fetched or sent', async () => {
    const c = rack();
    c.checksumRequired = [SOURCE];
    const name = c.create('worker-1', { imageURI: IMAGE });
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.message).toMatch(
      /the firmware source https:\/\/fw\.example\.com requires a checksum/,
    );
    expect(c.checksumFetches).toEqual([]);
    expect(c.sent).toEqual([]);
  });

  it('an image whose sha256 is another: Refused before anything is recorded or sent, both named', async () => {
    const c = rack();
    c.checksumRequired = [SOURCE];
    c.imageChecksum = `sha256:${'cd'.repeat(32)}`;
    const name = c.create('worker-1', {
      imageURI: `${IMAGE}?token=x`,
      checksum,
    });
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.message).toContain(
      `the checksum of ${IMAGE} is sha256:${'cd'.repeat(32)}, not ${checksum}`,
    );
    expect(nm.status?.message).not.toContain('token=x');
    expect(nm.status?.power?.firmware).toBeUndefined();
    expect(c.checksumFetches).toEqual([`${IMAGE}?token=x`]);
    expect(c.sent).toEqual([]);
  });

  it('while the image is fetched: waits with nothing recorded or sent; then sent once', async () => {
    const c = rack();
    c.checksumReading = { state: 'fetching' };
    const name = c.create('worker-1', { imageURI: IMAGE, checksum });
    await c.reconcile(name);
    const waiting = c.get(name);
    expect(waiting.status?.phase).toBe('Drained');
    expect(waiting.status?.power?.firmware).toBeUndefined();
    expect(waiting.status?.firmware).toBeUndefined();
    expect(c.sent).toEqual([]);
    c.checksumReading = { state: 'read', checksum };
    await c.reconcile(name);
    expect(c.sent).toHaveLength(1);
  });

  it('an image that could not be fetched: Refused with why, nothing sent', async () => {
    const c = rack();
    c.checksumReading = {
      state: 'failed',
      message: 'https://fw.example.com answered 404',
    };
    const name = c.create('worker-1', { imageURI: IMAGE, checksum });
    await c.reconcile(name);
    const nm = c.get(name);
    expect(nm.status?.phase).toBe('Refused');
    expect(nm.status?.message).toContain(
      'could not be fetched to check its checksum (https://fw.example.com answered 404)',
    );
    expect(c.sent).toEqual([]);
  });

  it('an image whose sha256 matches: sent once', async () => {
    const c = rack();
    c.imageChecksum = checksum;
    const name = c.create('worker-1', { imageURI: IMAGE, checksum });
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Drained');
    expect(c.sent).toHaveLength(1);
    expect(c.checksumFetches).toHaveLength(1);
  });
});

describe('intent firmware: the ServerBMC history', () => {
  it('is written once when the update ends, and not again on another reconcile', async () => {
    const c = rack();
    c.history.set('worker-1', []);
    const name = c.create('worker-1', { imageURI: IMAGE, targets: [BIOS] });
    await c.reconcile(name);
    expect(c.history.get('worker-1')).toEqual([]);
    c.task = completed();
    c.setVersion(BIOS, '2.5.0');
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Complete');
    expect(c.history.get('worker-1')).toEqual([
      {
        at: expect.any(String),
        maintenance: name,
        uid: `uid-${name}`,
        imageURI: IMAGE,
        result: 'Complete',
        components: [{ id: BIOS, before: '2.4.1', after: '2.5.0' }],
      },
    ]);
    await c.reconcile(name);
    expect(c.historyWrites).toBe(1);
  });

  it('a Failed update after the send is kept too; a refusal (nothing sent) is not', async () => {
    const c = rack();
    c.history.set('worker-1', []);
    c.history.set('worker-2', []);
    const name = c.create('worker-1', { imageURI: IMAGE });
    await c.reconcile(name);
    c.task = {
      state: 'Exception',
      finished: true,
      failed: true,
      messages: ['The image is corrupt.'],
      resetRequired: false,
    };
    await c.reconcile(name);
    expect(c.get(name).status?.phase).toBe('Failed');
    expect(c.history.get('worker-1')?.[0]).toMatchObject({
      result: 'Failed',
      maintenance: name,
    });
    const refused = c.create('worker-2', {
      imageURI: 'https://evil.example/x.bin',
    });
    await c.reconcile(refused);
    expect(c.get(refused).status?.phase).toBe('Refused');
    expect(c.history.get('worker-2')).toEqual([]);
  });
});
