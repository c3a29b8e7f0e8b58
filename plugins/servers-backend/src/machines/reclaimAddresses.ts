import { applyAddressPlan, planReclaimAddresses } from './discoveryAddresses';
import type { MachinesState } from '../cluster/machinesTypes';
import { withConflictRetry } from './checks';

/** What the address clean-up did to a TalosCluster. */
export interface SettledAddresses {
  appended: boolean;
  removed: string[];
}

/**
 * Takes the reclaim-added addresses nothing needs any more out of a TalosCluster and,
 * with `ensure`, lists that address (recorded as added by a reclaim when it was not
 * listed). Reads the cluster, every reclaim and every machine fresh from the apiserver,
 * so a request created a moment ago by another replica is not missed. Writes as the
 * backend's identity, on behalf of the user whose request called it.
 */
export async function settleReclaimAddresses(
  state: MachinesState,
  talosCluster: string,
  ensure?: string,
): Promise<SettledAddresses> {
  return withConflictRetry(async () => {
    const [cluster, reclaims, machines] = await Promise.all([
      state.freshTalosCluster(talosCluster),
      state.freshReclaims(),
      state.freshTalosMachines(),
    ]);
    const plan = planReclaimAddresses(cluster, reclaims, machines, ensure);
    if (!plan) return { appended: false, removed: [] };
    await state.updateTalosCluster(applyAddressPlan(cluster, plan));
    return { appended: plan.appended, removed: plan.removed };
  });
}
