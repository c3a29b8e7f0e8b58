import {
  RECLAIM_ADDED_ADDRESSES_ANNOTATION,
  reclaimAddedAddresses,
  type DiscoveryAddressAddedResponse,
} from '@rackside/plugin-servers-common';
import {
  requireReason,
  StateConflictError,
  targetTalosCluster,
  withConflictRetry,
} from '../checks';
import { requireReachable, sameAddress } from '../discoveryAddresses';
import type {
  AddDiscoveryAddressCommand,
  MachineActionResult,
  MachineCommandContext,
  MachineGrant,
} from '../MachinesService';

/** Most addresses a TalosCluster may list (its CRD's bound). */
const MAX_ADDRESSES = 1024;

/**
 * `POST /clusters/:cluster/discovery/addresses` (`machines:add`): appends an address
 * the user typed to the TalosCluster's discovery list. An address the user lists is
 * never recorded as added by a reclaim, so the reclaim clean-up leaves it alone.
 * An address discovery may not reach (not the Talos port, outside the allowed networks,
 * a name resolving outside them, a cluster that lists none) is a 400 naming the
 * networks, and nothing is written.
 */
export async function addDiscoveryAddress(
  ctx: MachineCommandContext,
  _user: string,
  command: AddDiscoveryAddressCommand,
  { state }: MachineGrant,
  learnt: Record<string, unknown>,
): Promise<MachineActionResult<DiscoveryAddressAddedResponse>> {
  const { address } = command;
  requireReason(ctx, command.reason);
  const target = await targetTalosCluster(state, command.talosCluster);
  learnt.talosCluster = target.metadata.name;

  await withConflictRetry(async () => {
    const current = await state.freshTalosCluster(target.metadata.name);
    // Against the cluster as it is now: the deployer may have changed its networks.
    await requireReachable(current, address, ctx.resolveName);
    const listed = current.spec.discovery?.addresses ?? [];
    const already = listed.find(a => sameAddress(a, address));
    if (already) {
      const byReclaim = reclaimAddedAddresses(current).some(a =>
        sameAddress(a, already),
      );
      throw new StateConflictError(
        `${already} is already a discovery address of ${target.metadata.name}${
          byReclaim
            ? ' (a Reset and add request listed it; it is taken out again once no request needs it, so add it by hand after that to keep it)'
            : ''
        }`,
      );
    }
    if (listed.length >= MAX_ADDRESSES) {
      throw new StateConflictError(
        `${target.metadata.name} already lists ${MAX_ADDRESSES} discovery addresses, the most it may`,
      );
    }
    // A stale record of this address would let the clean-up take the user's address.
    const recorded = reclaimAddedAddresses(current).filter(
      a => !sameAddress(a, address),
    );
    const annotations = { ...(current.metadata.annotations ?? {}) };
    if (recorded.length > 0) {
      annotations[RECLAIM_ADDED_ADDRESSES_ANNOTATION] = recorded.join(',');
    } else {
      delete annotations[RECLAIM_ADDED_ADDRESSES_ANNOTATION];
    }
    await state.updateTalosCluster({
      ...current,
      metadata: { ...current.metadata, annotations },
      spec: {
        ...current.spec,
        discovery: {
          ...current.spec.discovery,
          addresses: [...listed, address],
        },
      },
    });
  });
  return {
    answer: { talosCluster: target.metadata.name, address },
    outcome: 'address-added',
  };
}
