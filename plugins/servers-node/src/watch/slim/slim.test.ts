import {
  DRAIN_ORDER_KEY,
  DRAIN_RULE_KEY,
  MIRROR_POD_ANNOTATION,
} from '@rackside/plugin-servers-common';
import { shownNodeOf } from '../ClusterNodes';
import { slimIdentity, slimNode, slimPod, slimPodDisruptionBudget } from '.';

/** What a hostile writer can put on any object: 200 KiB of annotations and managedFields. */
function hostileMetadata() {
  const annotations: Record<string, string> = {};
  for (let i = 0; i < 100; i++)
    annotations[`junk.example/${i}`] = 'x'.repeat(2048);
  return {
    annotations,
    managedFields: Array.from({ length: 100 }, (_, i) => ({
      manager: `m-${i}`,
      operation: 'Update',
      fieldsV1: {
        'f:metadata': { 'f:annotations': { big: 'y'.repeat(1024) } },
      },
    })),
    finalizers: ['example.com/keep'],
    generateName: 'junk-',
  };
}

const size = (obj: unknown) => JSON.stringify(obj).length;

describe('slimIdentity', () => {
  it('keeps apiVersion, kind, name, namespace and resourceVersion only', () => {
    const configMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: {
        name: 'c',
        namespace: 'ns',
        resourceVersion: '7',
        uid: 'u',
        labels: { a: 'b' },
        ...hostileMetadata(),
      },
      data: { big: 'z'.repeat(10_000) },
    };
    expect(slimIdentity(configMap)).toEqual({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'c', namespace: 'ns', resourceVersion: '7' },
    });
  });

  it('has no namespace key for a cluster-scoped object', () => {
    const kept = slimIdentity({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'n', resourceVersion: '1' },
    });
    expect('namespace' in kept.metadata).toBe(false);
  });
});

describe('slimNode', () => {
  const node = {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name: 'worker-1',
      uid: 'uid-1',
      resourceVersion: '42',
      labels: { 'node-role.kubernetes.io/worker': '' },
      ...hostileMetadata(),
    },
    spec: {
      unschedulable: true,
      podCIDR: '10.0.0.0/24',
      taints: [{ key: 'k', effect: 'NoSchedule' }],
    },
    status: {
      conditions: [
        {
          type: 'Ready',
          status: 'True',
          lastHeartbeatTime: '2026-12-07T08:00:00Z',
          message: 'kubelet is posting ready status',
        },
        { type: 'MemoryPressure', status: 'False', reason: 'Fine' },
      ],
      nodeInfo: {
        bootID: 'boot-1',
        systemUUID: 'uuid-1',
        kernelVersion: '6.1',
        osImage: 'Talos',
      },
      addresses: [{ type: 'InternalIP', address: '10.5.0.2' }],
      images: Array.from({ length: 50 }, (_, i) => ({
        names: [`registry.example/image-${i}:latest`],
        sizeBytes: 1e8,
      })),
      capacity: { cpu: '64' },
      allocatable: { cpu: '63' },
    },
  };

  it('keeps what the operator and the catalog read', () => {
    expect(slimNode(node)).toEqual({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: {
        name: 'worker-1',
        uid: 'uid-1',
        resourceVersion: '42',
        labels: { 'node-role.kubernetes.io/worker': '' },
      },
      spec: { unschedulable: true },
      status: {
        conditions: [
          { type: 'Ready', status: 'True' },
          { type: 'MemoryPressure', status: 'False' },
        ],
        nodeInfo: {
          bootID: 'boot-1',
          systemUUID: 'uuid-1',
          osImage: 'Talos',
        },
        addresses: [{ type: 'InternalIP', address: '10.5.0.2' }],
      },
    });
  });

  it('drops huge annotations, managedFields, images and heartbeats', () => {
    const kept = slimNode(node);
    expect(kept.metadata).not.toHaveProperty('annotations');
    expect(kept.metadata).not.toHaveProperty('managedFields');
    expect(kept.status).not.toHaveProperty('images');
    expect(size(node)).toBeGreaterThan(300_000);
    expect(size(kept)).toBeLessThan(500);
  });

  it('holds everything a page shows: the shown projection of the slim is that of the Node', () => {
    expect(shownNodeOf(slimNode(node))).toEqual(shownNodeOf(node));
  });

  it('answers an empty Node without throwing', () => {
    expect(
      slimNode({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'x' } }),
    ).toEqual({
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name: 'x' },
      spec: {},
      status: { conditions: [], nodeInfo: {}, addresses: [] },
    });
  });
});

describe('slimPod', () => {
  const pod = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'db-0',
      namespace: 'prod',
      resourceVersion: '9',
      labels: { app: 'db' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'StatefulSet',
          name: 'db',
          uid: 's',
          controller: true,
        },
      ],
      deletionTimestamp: '2026-12-07T08:00:00Z',
      ...hostileMetadata(),
    },
    spec: {
      nodeName: 'worker-1',
      terminationGracePeriodSeconds: 30,
      containers: [
        { name: 'db', image: 'db:1', env: [{ name: 'SECRET', value: 's' }] },
      ],
      volumes: [
        { name: 'scratch', emptyDir: {} },
        { name: 'host', hostPath: { path: '/var/data', type: 'Directory' } },
        {
          name: 'pvc',
          persistentVolumeClaim: { claimName: 'data-db-0', readOnly: true },
        },
        {
          name: 'eph',
          ephemeral: {
            volumeClaimTemplate: { spec: { storageClassName: 'x' } },
          },
        },
        { name: 'cfg', configMap: { name: 'c' } },
      ],
    },
    status: {
      phase: 'Running',
      podIP: '10.1.0.3',
      containerStatuses: [{ name: 'db' }],
    },
  };
  pod.metadata.annotations[DRAIN_RULE_KEY] = 'wait-completed';
  pod.metadata.annotations[DRAIN_ORDER_KEY] = '2';
  pod.metadata.annotations[MIRROR_POD_ANNOTATION] = 'mirror';

  it('keeps what planDrain reads, and of the annotations only the drain rule, order and mirror mark', () => {
    expect(slimPod(pod)).toEqual({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: {
        name: 'db-0',
        namespace: 'prod',
        resourceVersion: '9',
        labels: { app: 'db' },
        annotations: {
          [DRAIN_RULE_KEY]: 'wait-completed',
          [DRAIN_ORDER_KEY]: '2',
          [MIRROR_POD_ANNOTATION]: 'mirror',
        },
        ownerReferences: pod.metadata.ownerReferences,
        deletionTimestamp: '2026-12-07T08:00:00Z',
      },
      spec: {
        containers: [],
        nodeName: 'worker-1',
        terminationGracePeriodSeconds: 30,
        volumes: [
          { name: 'scratch', emptyDir: {} },
          { name: 'host', hostPath: { path: '/var/data' } },
          { name: 'pvc', persistentVolumeClaim: { claimName: 'data-db-0' } },
          { name: 'eph', ephemeral: {} },
          { name: 'cfg' },
        ],
      },
      status: { phase: 'Running' },
    });
  });

  it('drops huge annotations, managedFields and the containers', () => {
    const kept = slimPod(pod);
    expect(kept.metadata).not.toHaveProperty('managedFields');
    expect(Object.keys(kept.metadata?.annotations ?? {})).toHaveLength(3);
    expect(size(pod)).toBeGreaterThan(300_000);
    expect(size(kept)).toBeLessThan(1_000);
  });

  it('keeps no annotations at all when none is the drain’s', () => {
    const plain = slimPod({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: 'p', namespace: 'n', ...hostileMetadata() },
    });
    expect(plain.metadata?.annotations).toBeUndefined();
    expect(plain.spec?.volumes).toEqual([]);
  });
});

describe('slimPodDisruptionBudget', () => {
  it('keeps the identity and the health, nothing of the selector or the status detail', () => {
    const pdb = {
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: {
        name: 'db',
        namespace: 'prod',
        resourceVersion: '3',
        labels: { app: 'db' },
        ...hostileMetadata(),
      },
      spec: { minAvailable: 2, selector: { matchLabels: { app: 'db' } } },
      status: {
        currentHealthy: 2,
        desiredHealthy: 3,
        disruptionsAllowed: 0,
        expectedPods: 3,
        disruptedPods: { 'db-1': '2026-12-07T08:00:00Z' },
        conditions: [
          { type: 'DisruptionAllowed', status: 'False', message: 'm' },
        ],
      },
    };
    const kept = slimPodDisruptionBudget(pdb);
    expect(kept).toEqual({
      apiVersion: 'policy/v1',
      kind: 'PodDisruptionBudget',
      metadata: { name: 'db', namespace: 'prod', resourceVersion: '3' },
      status: { currentHealthy: 2, desiredHealthy: 3 },
    });
    expect(size(kept)).toBeLessThan(200);
  });
});
