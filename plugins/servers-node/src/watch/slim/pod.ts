/*
 * A Pod as the drain reads it: the operator's drain watches a node's pods through it,
 * and the backend's plan pre-flight keeps every pod of a cluster through it, so what
 * both hold in memory is what servers-common planDrain reads and nothing else.
 */
import type { PodObject } from '../clients/core';
import type { RawKubeObject } from '../clients/types';

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
      annotations: pod.metadata?.annotations,
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
