/*
 * A Pod as the drain reads it: the operator's drain watches a node's pods through it,
 * and the backend's plan pre-flight keeps every pod of a cluster through it, so what
 * both hold in memory is what servers-common planDrain reads and nothing else.
 */
import {
  DRAIN_ORDER_KEY,
  DRAIN_RULE_KEY,
  MIRROR_POD_ANNOTATION,
} from '@rackside/plugin-servers-common';
import type { PodObject } from '../../clients/core';
import type { RawKubeObject } from '../../clients/types';

/**
 * The annotations planDrain reads. Any other (a last-applied configuration can be most
 * of a 256 KiB annotation budget) is not held, for every pod of a cluster.
 */
const DRAIN_ANNOTATIONS = [
  DRAIN_RULE_KEY,
  DRAIN_ORDER_KEY,
  MIRROR_POD_ANNOTATION,
] as const;

function drainAnnotationsOf(
  annotations: Record<string, string> | undefined,
): Record<string, string> | undefined {
  if (!annotations) return undefined;
  const kept: Record<string, string> = {};
  for (const key of DRAIN_ANNOTATIONS) {
    if (annotations[key] !== undefined) kept[key] = annotations[key];
  }
  return Object.keys(kept).length > 0 ? kept : undefined;
}

/** Keeps what a drain reads of a Pod (see planDrain). */
export function slimPod(obj: RawKubeObject): PodObject & RawKubeObject {
  const pod = obj as PodObject;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name: pod.metadata?.name,
      namespace: pod.metadata?.namespace,
      resourceVersion: pod.metadata?.resourceVersion,
      labels: pod.metadata?.labels,
      annotations: drainAnnotationsOf(pod.metadata?.annotations),
      ownerReferences: pod.metadata?.ownerReferences,
      deletionTimestamp: pod.metadata?.deletionTimestamp,
    },
    spec: {
      containers: [],
      nodeName: pod.spec?.nodeName,
      terminationGracePeriodSeconds: pod.spec?.terminationGracePeriodSeconds,
      // What tells emptyDir and node-local data apart (servers-common planDrain).
      volumes: (pod.spec?.volumes ?? []).map(v => ({
        name: v.name,
        emptyDir: v.emptyDir,
        hostPath: v.hostPath ? { path: v.hostPath.path } : undefined,
        persistentVolumeClaim: v.persistentVolumeClaim
          ? { claimName: v.persistentVolumeClaim.claimName }
          : undefined,
        ephemeral: v.ephemeral ? {} : undefined,
      })),
    },
    status: { phase: pod.status?.phase },
  } as PodObject & RawKubeObject;
}
