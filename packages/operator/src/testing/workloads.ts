/*
 * Workloads of the drain rack tests, on top of startOperatorRack(): a Deployment pinned to
 * one node, the pods on a node, waiting for them to run, and a watch that records the
 * evictions in the order the apiserver reports them (never the operator's own report).
 */
import { Watch } from '@kubernetes/client-node';
import type { OperatorRack } from './operatorRack';

export interface PinnedDeploymentOptions {
  replicas?: number;
  annotations?: Record<string, string>;
  graceSeconds?: number;
  volumes?: any[];
  tolerations?: any[];
}

/** The annotation that makes a drain wait out a pod's whole grace period. */
export const HONOR_GRACE = { 'rack.rackside.dev/honor-grace-period': 'true' };

/** The toleration a pod needs to run on a control-plane node. */
export const CONTROL_PLANE_TOLERATION = {
  key: 'node-role.kubernetes.io/control-plane',
  operator: 'Exists',
  effect: 'NoSchedule',
};

/** A Deployment of `name` (pods labelled app=name) whose pods run on `node` only. */
export function pinnedDeployment(
  namespace: string,
  name: string,
  node: string,
  opts: PinnedDeploymentOptions = {},
) {
  return {
    metadata: { name, namespace },
    spec: {
      replicas: opts.replicas ?? 1,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name }, annotations: opts.annotations },
        spec: {
          nodeSelector: { 'kubernetes.io/hostname': node },
          terminationGracePeriodSeconds: opts.graceSeconds,
          tolerations: opts.tolerations,
          volumes: opts.volumes,
          containers: [{ name, image: `registry.example/${name}:1` }],
        },
      },
    },
  };
}

/** The pods on a node (of one namespace when it is given). */
export async function podsOn(
  env: OperatorRack,
  node: string,
  namespace?: string,
) {
  const list = await env.core.listPodForAllNamespaces({
    fieldSelector: `spec.nodeName=${node}`,
  });
  return namespace
    ? list.items.filter(p => p.metadata?.namespace === namespace)
    : list.items;
}

/** Waits for exactly `count` Running pods of `app` on `node`, and answers them. */
export function runningOn(
  env: OperatorRack,
  app: string,
  node: string,
  count: number,
  namespace?: string,
) {
  return env.waitFor(`${count} ${app} pods Running on ${node}`, async () => {
    const pods = (await podsOn(env, node, namespace)).filter(
      p => p.metadata?.labels?.app === app && p.status?.phase === 'Running',
    );
    return pods.length === count && pods;
  });
}

/**
 * Watches the pods on a node (of one namespace when it is given) and records, in the
 * order the apiserver sends them, each pod's first deletionTimestamp ("evicted <app>")
 * and its deletion ("gone <app>"), with when each came.
 */
export async function recordEvictions(
  env: OperatorRack,
  node: string,
  namespace?: string,
) {
  const seen: string[] = [];
  const at: number[] = [];
  const marked = new Set<string>();
  const request = await new Watch(env.admin).watch(
    namespace ? `/api/v1/namespaces/${namespace}/pods` : '/api/v1/pods',
    { fieldSelector: `spec.nodeName=${node}` },
    (type: string, pod: any) => {
      const app = pod.metadata?.labels?.app;
      if (type === 'DELETED') {
        seen.push(`gone ${app}`);
        at.push(Date.now());
      } else if (
        pod.metadata?.deletionTimestamp &&
        !marked.has(pod.metadata.uid)
      ) {
        marked.add(pod.metadata.uid);
        seen.push(`evicted ${app}`);
        at.push(Date.now());
      }
    },
    () => undefined,
  );
  return { seen, at, stop: () => request.abort() };
}
