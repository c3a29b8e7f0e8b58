import { ServiceUnavailableError } from '@backstage/errors';
import {
  CREDENTIAL_KEY,
  credentialSecretName,
  isTerminalReclaimPhase,
  RACKSIDE_API_VERSION,
  RECLAIM_TTL_MINUTES,
  type ReclaimCreatedResponse,
} from '@rackside/plugin-servers-common';
import { randomBytes } from 'node:crypto';
import {
  requireReason,
  StateConflictError,
  targetTalosCluster,
} from '../checks';
import { requireReachable, sameAddress } from '../discoveryAddresses';
import type {
  CreateReclaimCommand,
  MachineActionResult,
  MachineCommandContext,
  MachineGrant,
} from '../MachinesService';
import { settleReclaimAddresses } from '../reclaimAddresses';

function reclaimName(): string {
  return `reclaim-${Date.now().toString(36)}-${randomBytes(2).toString('hex')}`;
}

/**
 * `POST /clusters/:cluster/reclaims` (`machines:reclaim`): "Reset and add" of a
 * machine another Talos cluster holds (decision 0002). Every check runs before anything
 * is written; then the MachineReclaim is created, then the Secret with the foreign
 * talosconfig, then the address is listed for discovery and stale reclaim-added
 * addresses are taken out.
 *
 * The credential is bound to its request (docs/architecture.md, "Adding machines"): the Secret is named
 * `<request>-talosconfig` (the CRD pins `credentialSecretRef.name` to it), carries the
 * label `rackside.dev/credential-of: <request>`, is immutable, and is owned by the
 * MachineReclaim with its uid. The owner's uid exists only once the request does, so
 * the request comes first and the Secret is created complete in one write (never
 * updated: the chart's admission policy lets the backend create only Secrets of this
 * shape). If that write fails, the request waits without a credential until its TTL
 * and expires; nothing is reset and no credential exists without an owner. The
 * reverse order would leave, on a failure between the two writes, a foreign admin
 * talosconfig in a Secret nothing owns and nothing deletes.
 *
 * The talosconfig travels only into that Secret: it is not logged, not in the audit
 * record, not in any answer or error message.
 */
export async function createReclaim(
  ctx: MachineCommandContext,
  user: string,
  command: CreateReclaimCommand,
  { state }: MachineGrant,
  learnt: Record<string, unknown>,
): Promise<MachineActionResult<ReclaimCreatedResponse>> {
  const { address } = command;
  requireReason(ctx, command.reason);

  const target = await targetTalosCluster(state, command.talosCluster);
  const targetName = target.metadata.name;
  learnt.talosCluster = targetName;
  // The operator reads the UUID at this address and lists it for discovery: only an
  // address discovery of the target cluster may reach (its networks and port).
  await requireReachable(target, address);

  const running = (await state.reclaims()).find(
    r =>
      sameAddress(r.spec.address, address) &&
      !isTerminalReclaimPhase(r.status?.phase ?? 'Pending'),
  );
  if (running) {
    throw new StateConflictError(
      `${address} already has a Reset and add request in progress: ${
        running.metadata.name
      } (${running.status?.phase ?? 'Pending'})`,
    );
  }
  const probed = (target.status?.addresses ?? []).find(a =>
    sameAddress(a.address, address),
  );
  if (probed?.state === 'Member') {
    throw new StateConflictError(
      `${address} is already a member of ${targetName}: there is nothing to reset`,
    );
  }
  if (probed?.state === 'Maintenance') {
    throw new StateConflictError(
      `${address} is in maintenance mode already: add it from the machine list instead of resetting it`,
    );
  }

  const name = reclaimName();
  const secretName = credentialSecretName(name);
  const ttlMinutes = command.ttlMinutes ?? RECLAIM_TTL_MINUTES.default;
  const created = await state.createReclaim({
    apiVersion: RACKSIDE_API_VERSION,
    kind: 'MachineReclaim',
    metadata: {
      name,
      namespace: state.namespace,
      labels: { 'app.kubernetes.io/part-of': 'rackside' },
    },
    spec: {
      address,
      targetCluster: targetName,
      credentialSecretRef: { name: secretName, key: CREDENTIAL_KEY },
      ttlMinutes,
      requestedBy: user,
      reason: command.reason.trim(),
    },
  });
  learnt.reclaim = name;

  try {
    await state.createCredentialSecret({
      name: secretName,
      owner: { name, uid: created.metadata.uid ?? '' },
      key: CREDENTIAL_KEY,
      talosconfig: command.talosconfig,
    });
  } catch (error) {
    throw new ServiceUnavailableError(
      `reclaim ${name} was recorded but its credential could not be stored (${
        (error as Error).message
      }); it cannot proceed and expires after ${ttlMinutes} minutes: try again`,
    );
  }

  const warnings: string[] = [];
  try {
    const settled = await settleReclaimAddresses(state, targetName, address);
    learnt.addressAppended = settled.appended;
    learnt.addressesRemoved = settled.removed;
  } catch (error) {
    // The request stands; the confirmation lists the address again.
    ctx.logger.warn(
      `reclaim ${name}: could not list ${address} for discovery in ${targetName}: ${error}`,
    );
    warnings.push(
      `${address} could not be listed for discovery in ${targetName} yet (${
        (error as Error).message
      }); confirming the reset lists it`,
    );
  }
  return {
    answer: { name, ...(warnings.length ? { warnings } : {}) },
    outcome: 'created',
  };
}
