/*
 * A Node as the operator's controllers read it. A Node is the largest object a cluster
 * has many of (images, managedFields, capacity, heartbeats in every condition): a cache
 * of 5,000 raw Nodes holds hundreds of megabytes, their slims a few. What a page and a
 * catalog entity show is narrower still: shownNodeOf (ClusterNodes.ts) keeps only the
 * facts whose change is worth a signal, and is a projection of this slim (its test).
 */
import type { NodeObject } from '../../clients/core';
import type { RawKubeObject } from '../../clients/types';

/**
 * Keeps what any side reads of a Node: name, uid, labels (roles, control plane, virtual,
 * the permission rules), schedulability, each condition's type and status (readiness,
 * the guard), the boot ID (a reboot's return), the system UUID (BMC and machine
 * identity) and the addresses (the Talos API).
 */
export function slimNode(obj: RawKubeObject): NodeObject & RawKubeObject {
  const node = obj as NodeObject;
  return {
    apiVersion: obj.apiVersion,
    kind: obj.kind,
    metadata: {
      name: node.metadata?.name,
      resourceVersion: node.metadata?.resourceVersion,
      uid: node.metadata?.uid,
      labels: node.metadata?.labels,
    },
    spec: { unschedulable: node.spec?.unschedulable },
    status: {
      conditions: (node.status?.conditions ?? []).map(c => ({
        type: c.type,
        status: c.status,
      })),
      nodeInfo: {
        bootID: node.status?.nodeInfo?.bootID,
        systemUUID: node.status?.nodeInfo?.systemUUID,
        // A Talos node's version (`Talos (v1.12.0)`): an upgrade is judged by it.
        osImage: node.status?.nodeInfo?.osImage?.slice(0, 256),
      },
      addresses: (node.status?.addresses ?? []).map(a => ({
        type: a.type,
        address: a.address,
      })),
    },
  } as NodeObject & RawKubeObject;
}
