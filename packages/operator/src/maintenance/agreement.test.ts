/*
 * The backend and the operator read the same cluster the same way (issue #22): one
 * snapshot (nodes, maintenances, the power channel) goes to the backend's view
 * (servers-backend `serverView`: what it offers and at which ceremony) and to this
 * operator's table (admission of a new NodeMaintenance, and the row that meets a flag set
 * on the open one), and every action on every node gets the same verdict from both.
 */
import {
  actionOfRequest,
  advertise,
  guard,
  invoke,
  nodeFactsFromNode,
  SERVER_ACTIONS,
  type MaintenanceIntent,
  type MaintenancePhase,
  type NodeMaintenance,
  type PowerProvider,
  type ServerAction,
} from '@rackside/plugin-servers-common';
/* eslint-disable @backstage/no-forbidden-package-imports -- the backend's own view, not
   a copy of it: the point is that the two sides agree (a devDependency, no cycle). */
import { serverView } from '@rackside/plugin-servers-backend/src/servers/view';
import { snapshotOf } from '@rackside/plugin-servers-backend/src/cluster/snapshot';
import type { MaintenanceObject } from '@rackside/plugin-servers-backend/src/cluster/types';
/* eslint-enable @backstage/no-forbidden-package-imports */
import type { NodeObject } from '@rackside/plugin-servers-node';
import { abandonRule, rowFor, transitions } from './table';
import { testNode as node } from '../testing/nodes';
import type { Decision, MachinePorts, NodeView } from './types';

const CREATED = '2026-03-01T10:00:00Z';
/** Later than every maintenance of the snapshot: a request made now. */
const NOW = '2026-03-01T12:00:00Z';
const flag = { by: 'user:default/ops', reason: 'agreement' };

function maintenance(
  name: string,
  nodeName: string,
  intent: MaintenanceIntent,
  phase: MaintenancePhase | undefined,
  spec: Partial<NodeMaintenance['spec']> = {},
): NodeMaintenance {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name, creationTimestamp: CREATED, generation: 1 },
    spec: {
      nodeName,
      intent,
      reason: 'snapshot',
      requestedBy: flag.by,
      ...spec,
    },
    status: phase
      ? {
          phase,
          history: [{ phase, at: CREATED, message: 'snapshot' }],
          admission: { verdict: 'allow', at: CREATED },
          ...(phase === 'Drained' || phase === 'PoweredOff'
            ? { cordonedAt: CREATED }
            : {}),
        }
      : undefined,
  } as NodeMaintenance;
}

/** The redfish channel, as the backend reads it (status) and the operator builds it. */
const provider = {
  apiVersion: 'rackside.dev/v1alpha1',
  kind: 'PowerProvider',
  metadata: { name: 'default', generation: 1 },
  spec: { type: 'redfish', attendedRack: false },
  status: {
    observedGeneration: 1,
    reboot: true,
    shutdown: true,
    powerOn: true,
    confirmsPowerOff: true,
  },
} as unknown as PowerProvider;

interface Snapshot {
  title: string;
  nodes: NodeView[];
  maintenances: NodeMaintenance[];
  bmcNodes: string[];
}

/** Workers in every state an action can meet; the same in each snapshot. */
const workers: NodeView[] = [
  node('worker-1'),
  node('worker-2', { unschedulable: true }),
  node('worker-3', { unschedulable: true }),
  node('worker-4', { unschedulable: true, ready: false }),
  node('worker-5'),
  node('worker-6'),
  node('worker-7'),
  node('worker-8', { unschedulable: true }),
  node('worker-9', { unschedulable: true }),
  node('worker-10', { unschedulable: true, ready: false }),
  node('virt-1', { virtual: true }),
];
const workerMaintenances: NodeMaintenance[] = [
  // worker-2: cordoned outside Rackside, no maintenance.
  maintenance('w3-drain', 'worker-3', 'drain', 'Drained'),
  maintenance('w4-shutdown', 'worker-4', 'shutdown', 'PoweredOff'),
  // Not yet admitted: the operator has not looked at it.
  maintenance('w5-drain', 'worker-5', 'drain', undefined),
  // worker-6 has no ServerBMC: no power verb reaches it.
  maintenance('w7-old', 'worker-7', 'reboot', 'Complete'),
  maintenance('w8-returning', 'worker-8', 'drain', 'Returning', {
    returnToService: { ...flag, at: CREATED },
  }),
  // Two open at once (one made with kubectl a moment ago): the admitted, older one holds
  // the node on both sides; the newer one will be refused naming it.
  maintenance('w9-first', 'worker-9', 'drain', 'Drained'),
  // Rebooting: the verb went out, the node is not back yet.
  maintenance('w10-reboot', 'worker-10', 'reboot', 'Rebooting'),
  {
    ...maintenance('w9-second', 'worker-9', 'cordon', undefined),
    metadata: { name: 'w9-second', creationTimestamp: NOW, generation: 1 },
  } as NodeMaintenance,
];
const withBmc = [
  'cp-1',
  'cp-2',
  'cp-3',
  'cp-4',
  'cp-5',
  'worker-1',
  'worker-2',
  'worker-3',
  'worker-4',
  'worker-5',
  'worker-7',
  'worker-8',
  'worker-9',
  'worker-10',
  'virt-1',
];

const snapshots: Snapshot[] = [
  {
    title: 'margin 1: a member reboot is a hazard',
    nodes: [
      node('cp-1', { cp: true }),
      node('cp-2', { cp: true }),
      node('cp-3', { cp: true }),
      ...workers,
    ],
    // An unadmitted reboot claims no margin, on either side.
    maintenances: [
      ...workerMaintenances,
      maintenance('cp-3-reboot', 'cp-3', 'reboot', undefined),
    ],
    bmcNodes: withBmc,
  },
  {
    title: 'margin 0: an admitted reboot spent it, a member reboot is refused',
    nodes: [
      node('cp-1', { cp: true }),
      node('cp-2', { cp: true }),
      node('cp-3', { cp: true }),
      node('cp-4', { cp: true }),
      node('cp-5', { cp: true, ready: false }),
      ...workers,
    ],
    maintenances: [
      ...workerMaintenances,
      maintenance('cp-1-reboot', 'cp-1', 'reboot', 'Drained'),
    ],
    bmcNodes: withBmc,
  },
  {
    title: 'no control plane labelled: every reboot and shutdown is refused',
    nodes: [node('cp-1'), ...workers],
    maintenances: workerMaintenances,
    bmcNodes: withBmc,
  },
];

function operatorPorts(snapshot: Snapshot, extra: NodeMaintenance[]) {
  const advertisement = advertise('redfish', { attendedRack: false });
  const all = [...snapshot.maintenances, ...extra];
  const ports: MachinePorts = {
    now: () => Date.parse(NOW),
    // The probes' targets are allowed: the backend's view judges the action, not a
    // target (its request check refuses one outside servers.upgrades with a 400 first).
    upgrades: {
      imagePrefixes: ['factory.talos.dev/installer/'],
      firmwareSources: ['https://firmware.example.com'],
    },
    view: {
      node: name => snapshot.nodes.find(n => n.metadata?.name === name),
      nodes: () => snapshot.nodes,
      maintenances: () => all,
    },
    nodes: { setUnschedulable: async () => {} },
    pods: { onNode: async () => [] },
    drains: {
      ensure: () => ({
        state: 'running',
        progress: { total: 1, evicted: 0, pending: 1 },
      }),
    },
    power: {
      check: (verb, n) =>
        invoke(advertisement, verb, n ? nodeFactsFromNode(n) : undefined, {
          hasServerBmc: snapshot.bmcNodes.includes(n?.metadata?.name ?? ''),
        }),
      channelType: () => 'redfish',
      powerState: async () => undefined,
      readback: () => undefined,
      deadlines: { rebootSeconds: 600, unansweredSeconds: 600 },
    },
  };
  return ports;
}

/** The targets of the upgrade and firmware probes (allowed in the operator's ports). */
const UPGRADE_IMAGE = 'factory.talos.dev/installer/abc:v1.12.0';
const FIRMWARE_URI = 'https://firmware.example.com/bios-2.5.0.bin';

/** A new NodeMaintenance asking for the action, as the backend would write it. */
function request(action: ServerAction, nodeName: string): NodeMaintenance {
  const intent: MaintenanceIntent =
    action === 'uncordon' ? 'cordon' : (action as MaintenanceIntent);
  const nm = maintenance('probe', nodeName, intent, undefined, {
    ...(action === 'uncordon' ? { returnToService: { ...flag, at: NOW } } : {}),
    ...(action === 'upgrade' ? { upgrade: { image: UPGRADE_IMAGE } } : {}),
    ...(action === 'firmware' ? { firmware: { imageURI: FIRMWARE_URI } } : {}),
  });
  nm.metadata.creationTimestamp = NOW;
  if (actionOfRequest(nm.spec) !== action) {
    throw new Error(`${action} is not what the backend writes for it`);
  }
  return nm;
}

/** The row that meets the maintenance, and after admission the next one too. */
async function operatorStep(
  nm: NodeMaintenance,
  ports: MachinePorts,
): Promise<Decision> {
  const decision = await rowFor(nm)(nm, ports);
  if (decision.kind === 'transition' && decision.to === 'Requested') {
    const admitted = {
      ...nm,
      status: { ...nm.status, ...decision.status, phase: 'Requested' as const },
    };
    return rowFor(admitted)(admitted, ports);
  }
  return decision;
}

const FLAG_OF: Partial<Record<ServerAction, keyof NodeMaintenance['spec']>> = {
  uncordon: 'returnToService',
  'maintenance-abandon': 'abandon',
  'power-on': 'powerOn',
};

/** What a side decided: admitted (at which rung), refused (saying why), acted on a flag. */
type Verdict =
  | { kind: 'admit'; hazard: boolean }
  | { kind: 'refuse'; says: string }
  | { kind: 'flag'; acts: boolean };

/**
 * The operator's verdict on the action: a flag set on the node's open maintenance (the
 * row that meets it acts on it, or holds or ignores it), else its admission of a new
 * NodeMaintenance asking for it.
 */
async function operatorVerdict(
  snapshot: Snapshot,
  action: ServerAction,
  nodeName: string,
  open: NodeMaintenance | undefined,
): Promise<Verdict> {
  const flagName = FLAG_OF[action];
  if (flagName && (open || action !== 'uncordon')) {
    if (!open) return { kind: 'flag', acts: false };
    const flagged = {
      ...open,
      spec: { ...open.spec, [flagName]: { ...flag, at: NOW } },
    } as NodeMaintenance;
    const decision = await operatorStep(flagged, operatorPorts(snapshot, []));
    let acts: boolean;
    if (action === 'maintenance-abandon')
      acts = rowFor(flagged) === abandonRule;
    else if (action === 'power-on') {
      acts = decision.kind === 'record' && decision.send === 'powerOn';
    } else acts = decision.kind === 'transition' && decision.to === 'Returning';
    return { kind: 'flag', acts };
  }
  const probe = request(action, nodeName);
  const decision = await transitions.New(
    probe,
    operatorPorts(snapshot, [probe]),
  );
  if (decision.kind !== 'transition') {
    throw new Error(`admission answered ${decision.kind}`);
  }
  return decision.to === 'Requested'
    ? {
        kind: 'admit',
        hazard: decision.status?.admission?.verdict === 'hazard',
      }
    : { kind: 'refuse', says: decision.message };
}

describe.each(snapshots)('one snapshot, one verdict: $title', snapshot => {
  const backendSnapshot = snapshotOf(
    snapshot.nodes as NodeObject[],
    snapshot.maintenances as unknown as MaintenanceObject[],
    provider,
    snapshot.bmcNodes,
  );
  const cases = snapshot.nodes.flatMap(n =>
    SERVER_ACTIONS.map(action => [n.metadata!.name!, action] as const),
  );

  /**
   * The backend's verdict, from its view and the guard its request check runs. The one
   * difference, on purpose: a cordon of a node already cordoned and a return of a node in
   * service change nothing, so the backend does not offer them, while the operator admits
   * one written with kubectl (its Cordoned record is harmless, and abandon restores it).
   */
  function backendVerdict(action: ServerAction, nodeName: string): Verdict {
    const n = snapshot.nodes.find(c => c.metadata?.name === nodeName)!;
    const view = serverView(
      'plant-a',
      n as NodeObject,
      backendSnapshot,
      () => true,
    ).actions[action];
    const open = backendSnapshot.activeByNode.get(nodeName);
    const accepted = view.offered && view.ceremony.level !== 'refused';
    if (FLAG_OF[action] && (open || action !== 'uncordon')) {
      return { kind: 'flag', acts: accepted };
    }
    if (accepted) {
      return { kind: 'admit', hazard: view.ceremony.level === 'hazard' };
    }
    if (/is already cordoned\.$|is in service\.$/.test(view.why ?? '')) {
      return { kind: 'admit', hazard: false };
    }
    const guarded = guard(
      { action, nodeName },
      backendSnapshot.derivation,
      backendSnapshot.facts,
    );
    return { kind: 'refuse', says: view.why ?? guarded.reason };
  }

  it.each(cases)('%s: %s', async (nodeName, action) => {
    const expected = backendVerdict(action, nodeName);
    const open = backendSnapshot.activeByNode.get(nodeName) as
      | NodeMaintenance
      | undefined;
    const actual = await operatorVerdict(snapshot, action, nodeName, open);
    // Refused for the same reason, in the same words (the operator may add context
    // before them, which starts the sentence: only their first letter's case may differ).
    const says = expected.kind === 'refuse' ? expected.says : '';
    const escape = (text: string) =>
      text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const matcher = expect.stringMatching(
      says
        ? `[${escape(says[0].toLowerCase())}${escape(
            says[0].toUpperCase(),
          )}]${escape(says.slice(1))}`
        : '',
    );
    expect(actual).toEqual(
      expected.kind === 'refuse' ? { ...expected, says: matcher } : expected,
    );
  });
});
