import { createClusterNodes, type ClusterNodes } from './ClusterNodes';
import { FakeKube } from '../testing';

const NODES = '/api/v1/nodes';

function node(
  name: string,
  ready = 'True',
  heartbeat = '2026-12-01T10:00:00Z',
) {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      labels: { 'kubernetes.io/hostname': name },
      managedFields: [{ manager: 'kubelet', time: heartbeat }],
    },
    spec: {},
    status: {
      conditions: [
        {
          type: 'MemoryPressure',
          status: 'False',
          lastHeartbeatTime: heartbeat,
        },
        { type: 'Ready', status: ready, lastHeartbeatTime: heartbeat },
      ],
      nodeInfo: { systemUUID: `uuid-${name}`, osImage: 'Talos (v1.11.3)' },
      images: [{ names: ['big'], sizeBytes: 1 }],
    },
  } as any;
}

/** Resolves with the names of the next `changed`; rejects if none comes before `ms`. */
function nextChange(nodes: ClusterNodes) {
  return new Promise<ReadonlySet<string>>(resolve => {
    const off = nodes.on('changed', names => {
      off();
      resolve(names);
    });
  });
}

describe('ClusterNodes', () => {
  let kube: FakeKube;
  let nodes: ClusterNodes;
  let changes: Array<ReadonlySet<string>>;

  beforeEach(async () => {
    kube = new FakeKube();
    kube.put(NODES, node('a'));
    kube.put(NODES, node('b'));
    nodes = createClusterNodes({
      cluster: 'c',
      transport: kube,
      changedDelayMs: 1,
    });
    changes = [];
    await nodes.synced;
    await nextChange(nodes); // the first list
    nodes.on('changed', names => changes.push(names));
  });

  afterEach(() => nodes.stop());

  it('a heartbeat changes no row: same objects, same generation, no changed event', async () => {
    const before = nodes.list();
    const generation = nodes.generation;
    const digest = nodes.get('a')!.digest;
    // A heartbeat as the kubelet writes it: new resourceVersion, heartbeat times,
    // managedFields, and something nobody shows (images).
    const beat = node('a', 'True', '2026-12-01T10:00:40Z');
    beat.status.images = [{ names: ['other'], sizeBytes: 2 }];
    kube.put(NODES, beat);
    // A change of b after it, so there is an event to wait for: the heartbeat's would
    // have come first, in the same or an earlier burst.
    kube.put(NODES, node('b', 'False'));
    const names = await nextChange(nodes);
    expect([...names]).toEqual(['b']);
    expect(changes.flatMap(c => [...c])).toEqual(['b']);
    expect(nodes.get('a')!.digest).toBe(digest);
    expect(nodes.list()[0]).toBe(before[0]);
    expect(nodes.generation).toBe(generation + 1);
  });

  it('a readiness change is one changed event with the node and new facts', async () => {
    const generation = nodes.generation;
    kube.put(NODES, node('a', 'False'));
    const names = await nextChange(nodes);
    expect([...names]).toEqual(['a']);
    expect(nodes.get('a')!.facts.ready).toBe(false);
    expect(nodes.generation).toBeGreaterThan(generation);
  });

  it('keeps only what is shown, ordered by name', async () => {
    kube.put(NODES, node('0-first'));
    await nextChange(nodes);
    expect(nodes.list().map(n => n.metadata?.name)).toEqual([
      '0-first',
      'a',
      'b',
    ]);
    const a = nodes.get('a')!.node;
    expect(a.status).toEqual({
      conditions: [{ type: 'Ready', status: 'True' }],
      nodeInfo: { systemUUID: 'uuid-a', osImage: 'Talos (v1.11.3)' },
    });
    expect((a.metadata as any).managedFields).toBeUndefined();
  });

  it('a new OS image (an upgrade came back) is a change with the new version', async () => {
    const upgraded = node('a');
    upgraded.status.nodeInfo.osImage = 'Talos (v1.12.0)';
    kube.put(NODES, upgraded);
    expect([...(await nextChange(nodes))]).toEqual(['a']);
    expect(nodes.get('a')!.node.status?.nodeInfo?.osImage).toBe(
      'Talos (v1.12.0)',
    );
  });

  it('a label change and a removal are changes', async () => {
    const labelled = node('a');
    labelled.metadata.labels['node-role.kubernetes.io/control-plane'] = '';
    kube.put(NODES, labelled);
    expect([...(await nextChange(nodes))]).toEqual(['a']);
    expect(nodes.get('a')!.facts.controlPlane).toBe(true);
    kube.delete(NODES, 'b');
    expect([...(await nextChange(nodes))]).toEqual(['b']);
    expect(nodes.get('b')).toBeUndefined();
  });
});
