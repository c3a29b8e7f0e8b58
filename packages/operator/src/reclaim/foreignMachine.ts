/*
 * What the foreign machine of a MachineReclaim is now, read with its talosconfig, in
 * named steps: the credential bound to the request, the address inside the target
 * cluster's networks, not one of our own machines, and a reset that keeps the foreign
 * etcd. Each step answers with a Decision when the request cannot go on.
 */
import type {
  MachineReclaim,
  TalosCluster,
} from '@rackside/plugin-servers-common';
import {
  parseTalosconfig,
  reachFor,
  type Talosconfig,
} from '@rackside/plugin-servers-node';
import { X509Certificate } from 'node:crypto';
import { ReclaimReason } from '../runtime/lifecycle/reasons';
import {
  callTimeout,
  end,
  isDecision,
  refuseNotBound,
  sameHost,
  wait,
} from './decisions';
import { judgeReset, readEtcdView, withResetsInFlight } from './etcdSafety';
import type { Decision, LifecyclePorts } from './types';

const OWN_MACHINES = 'taking our own machines out goes through maintenance';

const BEGIN_CERTIFICATE = '-----BEGIN CERTIFICATE-----';
const END_CERTIFICATE = '-----END CERTIFICATE-----';

/**
 * The certificate blocks of a PEM text, front to back, each search starting where the
 * last one ended: the text comes from a Secret anyone with kubectl may write (up to
 * 1 MiB), and a lazy regex went on to the end of the text from every BEGIN line that
 * has no END after it (25,000 such lines took 4 s).
 */
function certificateBlocks(pem: string): string[] {
  const blocks: string[] = [];
  let from = 0;
  for (;;) {
    const start = pem.indexOf(BEGIN_CERTIFICATE, from);
    if (start === -1) return blocks;
    // At least one character of body, as a block must have.
    const endAt = pem.indexOf(
      END_CERTIFICATE,
      start + BEGIN_CERTIFICATE.length + 1,
    );
    // No END after this BEGIN means none after any later one either.
    if (endAt === -1) return blocks;
    from = endAt + END_CERTIFICATE.length;
    blocks.push(pem.slice(start, from));
  }
}

/** Whether two PEM bundles share a certificate (compared by fingerprint, not by text). */
export function sharesCertificate(a: string, b: string): boolean {
  const fingerprints = (pem: string) =>
    certificateBlocks(pem).flatMap(block => {
      try {
        return [new X509Certificate(block).fingerprint256];
      } catch {
        return [];
      }
    });
  const ours = new Set(fingerprints(b));
  return fingerprints(a).some(f => ours.has(f));
}

/**
 * What the foreign machine is now, read with its talosconfig; a Decision when it cannot
 * go on. In order: the credential must be bound to the request; its CA must not be the
 * target cluster's own; the machine must answer as a member of the foreign cluster; its
 * UUID must not be a Node of this cluster; and its reset must keep the foreign etcd
 * (members read now, each voting member asked whether it is up). The etcd read is the
 * last call before the answer: at the confirmation the Reset is recorded right after it.
 */
export async function readForeignMachine(
  mr: MachineReclaim,
  ports: LifecyclePorts,
  until: number,
  missing: 'wait' | 'fail' = 'wait',
): Promise<
  | { talosconfig: Talosconfig; uuid: string; safety: string; dial: string }
  | Decision
> {
  const talosconfig = await readTalosconfig(mr, ports, until, missing);
  if (isDecision(talosconfig)) return talosconfig;
  const target = await reachableTarget(mr, ports, until);
  if (isDecision(target)) return target;
  const { cluster, dial } = target;
  const notOurs =
    (await refuseOwnCa(mr, ports, until, cluster, talosconfig)) ??
    (await probeForeign(mr, ports, until, dial, talosconfig));
  if (notOurs) return notOurs;
  const machine = await readForeignUUID(mr, ports, until, dial, talosconfig);
  if (isDecision(machine)) return machine;
  const safety = await judgeForeignReset(mr, ports, until, target, talosconfig);
  if (isDecision(safety)) return safety;
  return { talosconfig, uuid: machine.uuid, safety: safety.summary, dial };
}

/** The talosconfig of the credential bound to the request (waited for while it is not there). */
async function readTalosconfig(
  mr: MachineReclaim,
  ports: LifecyclePorts,
  until: number,
  missing: 'wait' | 'fail',
): Promise<Talosconfig | Decision> {
  const secretName = mr.spec.credentialSecretRef.name;
  const key = mr.spec.credentialSecretRef.key ?? 'talosconfig';
  const credential = await ports.credential.read(mr);
  if (credential.kind === 'notBound') {
    return refuseNotBound(mr, ports, credential.problems);
  }
  if (credential.kind === 'absent' && missing === 'fail') {
    return end(
      'Failed',
      `The credential Secret ${secretName} is gone, so the reset cannot be sent. Nothing was reset.`,
      ReclaimReason.ReclaimFailed,
    );
  }
  if (credential.kind === 'bound' && credential.talosconfig === undefined) {
    // Immutable and owned by the request: the key will not appear later.
    return end(
      'Failed',
      `The credential Secret ${secretName} has no key ${key}. Nothing was reset.`,
      ReclaimReason.ReclaimFailed,
    );
  }
  const text = credential.kind === 'bound' ? credential.talosconfig : undefined;
  if (!text) {
    // The Secret usually follows its request by a moment (it is owned by it): a young
    // request is looked at again soon, an older one at the usual interval.
    const age = ports.now() - Date.parse(mr.metadata.creationTimestamp ?? '');
    const decision = wait(
      ports,
      until,
      'CredentialMissing',
      `waiting for the credential Secret ${
        mr.spec.credentialSecretRef.name
      } (key ${mr.spec.credentialSecretRef.key ?? 'talosconfig'})`,
    );
    if (decision.kind === 'wait' && Number.isFinite(age)) {
      decision.requeueAfterMs = Math.min(
        decision.requeueAfterMs ?? ports.limits.retryMs,
        Math.max(500, age),
      );
    }
    return decision;
  }
  try {
    return parseTalosconfig(text);
  } catch (error) {
    return end(
      'Failed',
      `The talosconfig in Secret ${
        mr.spec.credentialSecretRef.name
      } cannot be used: ${(error as Error).message}. Nothing was reset.`,
      ReclaimReason.ReclaimFailed,
    );
  }
}

/** The target cluster, and the checked address to dial: inside its allowed networks. */
async function reachableTarget(
  mr: MachineReclaim,
  ports: LifecyclePorts,
  until: number,
): Promise<{ cluster: TalosCluster; dial: string } | Decision> {
  const address = mr.spec.address;
  const cluster = ports.cluster(
    mr.metadata.namespace ?? '',
    mr.spec.targetCluster,
  );
  if (!cluster) {
    return end(
      'Refused',
      `There is no TalosCluster ${mr.spec.targetCluster} in namespace ${mr.metadata.namespace} to add ${address} to any more. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  const reach = await reachFor(cluster, address, ports.resolve);
  if (!reach.allowed) {
    const message = `${address} is not contacted: ${reach.message}`;
    if (reach.state === 'Unreachable') {
      // A name that does not resolve now may resolve later (within the TTL).
      return wait(ports, until, 'MachineUnreachable', message);
    }
    return end(
      'Refused',
      `${message}. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  // From here on every call goes to the checked address (for a name: its checked IP).
  return { cluster, dial: reach.dial };
}

/** Refused when the talosconfig is issued by the target cluster's own CA. */
async function refuseOwnCa(
  mr: MachineReclaim,
  ports: LifecyclePorts,
  until: number,
  cluster: TalosCluster,
  talosconfig: Talosconfig,
): Promise<Decision | undefined> {
  const address = mr.spec.address;
  const secretName = mr.spec.credentialSecretRef.name;
  let ownCa: string;
  try {
    ownCa = await ports.clusterCa(cluster);
  } catch (error) {
    return wait(
      ports,
      until,
      'TargetTalosconfigUnreadable',
      `the talosconfig of TalosCluster ${
        mr.spec.targetCluster
      } could not be read to compare its CA: ${(error as Error).message}`,
    );
  }
  if (sharesCertificate(talosconfig.identity.ca, ownCa)) {
    return end(
      'Refused',
      `The talosconfig in Secret ${secretName} is issued by the CA of TalosCluster ${mr.spec.targetCluster} itself: ${address} would be one of our own machines, and ${OWN_MACHINES}. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  return undefined;
}

/** The machine must answer as a configured member of the talosconfig's cluster. */
async function probeForeign(
  mr: MachineReclaim,
  ports: LifecyclePorts,
  until: number,
  dial: string,
  talosconfig: Talosconfig,
): Promise<Decision | undefined> {
  const address = mr.spec.address;
  const probe = await ports.talos.probe(dial, {
    ca: talosconfig.identity.ca,
    timeoutMs: callTimeout(ports, until),
  });
  if (probe.mode === 'unreachable') {
    return wait(
      ports,
      until,
      'MachineUnreachable',
      `${address} does not answer: ${probe.reason}`,
    );
  }
  if (probe.mode === 'maintenance') {
    return end(
      'Refused',
      `${address} answers in maintenance mode: no cluster holds it, so there is nothing to reset. Add it with Add node instead.`,
      ReclaimReason.Refused,
    );
  }
  if (probe.serverTrusted !== true) {
    return end(
      'Refused',
      `${address} is not a machine of the cluster this talosconfig belongs to (its server certificate is not issued by that cluster's CA${
        probe.trustDetail ? `: ${probe.trustDetail}` : ''
      }). Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  return undefined;
}

/** The machine's UUID, read over mTLS; refused when it is a Node of this cluster. */
async function readForeignUUID(
  mr: MachineReclaim,
  ports: LifecyclePorts,
  until: number,
  dial: string,
  talosconfig: Talosconfig,
): Promise<{ uuid: string } | Decision> {
  const address = mr.spec.address;
  let uuid: string;
  try {
    uuid = (
      await ports.talos.uuid(
        dial,
        talosconfig.identity,
        callTimeout(ports, until),
      )
    ).toLowerCase();
  } catch (error) {
    return wait(
      ports,
      until,
      'UUIDUnreadable',
      `the UUID of ${address} could not be read: ${(error as Error).message}`,
    );
  }
  const node = ports.nodeWithUUID(uuid);
  if (node) {
    return end(
      'Refused',
      `${address} has the UUID ${uuid}, the system UUID of Node ${node} of this cluster: ${OWN_MACHINES}. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  return { uuid };
}

/**
 * Whether the reset keeps the foreign etcd (members read now, each voting member asked
 * whether it is up), counting the resets already in flight; no other request resets the
 * same machine. The etcd read is the last call before the answer.
 */
async function judgeForeignReset(
  mr: MachineReclaim,
  ports: LifecyclePorts,
  until: number,
  target: { cluster: TalosCluster; dial: string },
  talosconfig: Talosconfig,
): Promise<{ summary: string } | Decision> {
  const address = mr.spec.address;
  const { cluster, dial } = target;
  const inFlight = ports.resetsInFlight(mr);
  const sameMachine = inFlight.find(other => sameHost(other.address, address));
  if (sameMachine) {
    return end(
      'Refused',
      `MachineReclaim ${sameMachine.name} is resetting ${address} already. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  const verdict = judgeReset(
    address,
    withResetsInFlight(
      await readEtcdView(
        ports.talos,
        dial,
        talosconfig,
        callTimeout(ports, until),
        // The talosconfig's endpoints and the member list's hosts come with the
        // request: only those inside the allowed networks are dialled.
        async endpoint => {
          const checked = await reachFor(cluster, endpoint, ports.resolve);
          return checked.allowed
            ? checked
            : { allowed: false, message: checked.message };
        },
      ),
      inFlight,
    ),
  );
  if (verdict.verdict === 'unknown') {
    return wait(ports, until, 'EtcdMembersUnknown', verdict.reason);
  }
  if (verdict.verdict === 'refuse') {
    return end(
      'Refused',
      `Refused: ${verdict.reason}. Nothing was reset.`,
      ReclaimReason.Refused,
    );
  }
  return { summary: verdict.summary };
}
