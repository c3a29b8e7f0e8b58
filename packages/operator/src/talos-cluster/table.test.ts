import type { TalosCluster } from '@rackside/plugin-servers-common';
import { talosClusterObject } from '../testing/reclaimFixtures';
import { makeTalosconfig } from '../testing/talosconfigs';
import {
  discoveryTable,
  intervalOf,
  stateOf,
  TALOSCONFIG_RETRY_MS,
  type DiscoveryReads,
} from './table';

const T0 = Date.parse('2026-12-07T08:00:00.000Z');
let TALOSCONFIG: string;

beforeAll(async () => {
  TALOSCONFIG = (await makeTalosconfig('plant-a', ['10.0.3.11'])).text;
});

/** A cluster last probed `agoMs` before T0, its spec as then. */
function probed(agoMs: number, more: Partial<TalosCluster> = {}): TalosCluster {
  const cluster = talosClusterObject();
  return {
    ...cluster,
    status: {
      lastDiscoveryTime: new Date(T0 - agoMs).toISOString(),
      observedGeneration: cluster.metadata.generation,
    },
    ...more,
  };
}

function reads(more: Partial<DiscoveryReads> = {}): DiscoveryReads {
  return {
    now: () => T0,
    readSecret: async () => TALOSCONFIG,
    woken: false,
    ...more,
  };
}

describe('the TalosCluster discovery table', () => {
  it('is due when never probed, woken, its spec changed or the interval passed', () => {
    expect(intervalOf(talosClusterObject())).toBe(300_000);
    expect(stateOf(talosClusterObject(), reads())).toBe('Due');
    expect(stateOf(probed(60_000), reads())).toBe('NotDue');
    expect(stateOf(probed(60_000), reads({ woken: true }))).toBe('Due');
    expect(stateOf(probed(300_000), reads())).toBe('Due');
    const changed = probed(60_000);
    changed.metadata.generation = 2;
    expect(stateOf(changed, reads())).toBe('Due');
  });

  it('NotDue waits exactly until the pass is due', async () => {
    expect(await discoveryTable.NotDue(probed(60_000), reads())).toEqual({
      kind: 'wait',
      requeueAfterMs: 240_000,
    });
  });

  it('Due probes with the identity of the cluster talosconfig', async () => {
    const asked: string[] = [];
    const decision = await discoveryTable.Due(
      talosClusterObject(),
      reads({
        readSecret: async (namespace, ref) => {
          asked.push(`${namespace}/${ref.name}/${ref.key}`);
          return TALOSCONFIG;
        },
      }),
    );
    expect(asked).toEqual(['rackside-system/plant-a-talosconfig/talosconfig']);
    expect(decision.kind).toBe('probe');
    const probe = decision as Extract<typeof decision, { kind: 'probe' }>;
    expect(probe.intervalMs).toBe(300_000);
    expect(probe.identity.ca).toContain('BEGIN CERTIFICATE');
  });

  it('Due without a readable talosconfig records Ready False once, then only waits', async () => {
    const unreadable = reads({
      readSecret: async () => {
        throw new Error('secret plant-a-talosconfig not found');
      },
    });
    const cluster = talosClusterObject();
    const decision = await discoveryTable.Due(cluster, unreadable);
    expect(decision).toEqual({
      kind: 'record',
      status: {
        conditions: [
          {
            type: 'Ready',
            status: 'False',
            reason: 'TalosconfigUnavailable',
            message:
              "discovery needs the cluster's talosconfig: secret plant-a-talosconfig not found",
            observedGeneration: 1,
            lastTransitionTime: new Date(T0).toISOString(),
          },
        ],
      },
      event: {
        type: 'Warning',
        reason: 'TalosconfigUnavailable',
        message:
          "discovery needs the cluster's talosconfig: secret plant-a-talosconfig not found",
      },
      requeueAfterMs: TALOSCONFIG_RETRY_MS,
    });
    const recorded = {
      ...cluster,
      status: (decision as Extract<typeof decision, { kind: 'record' }>).status,
    };
    expect(await discoveryTable.Due(recorded, unreadable)).toEqual({
      kind: 'wait',
      requeueAfterMs: TALOSCONFIG_RETRY_MS,
    });
  });

  it('retries an unreadable talosconfig no later than the interval', async () => {
    const decision = await discoveryTable.Due(
      talosClusterObject({ intervalSeconds: 20 }),
      reads({
        readSecret: async () => {
          throw new Error('forbidden');
        },
      }),
    );
    expect(decision).toEqual(
      expect.objectContaining({ kind: 'record', requeueAfterMs: 20_000 }),
    );
  });
});
