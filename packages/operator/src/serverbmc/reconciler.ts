/*
 * Reconciles a ServerBMC: runs the row of its state (table.ts) and writes what it
 * decided. The check needs no call to the BMC; the BMC itself is only called when a verb
 * is sent or read back, and by the health sweep (health.ts).
 */
import type { ServerBMC } from '@rackside/plugin-servers-common';
import { runPasses } from '../runtime/lifecycle/table';
import { serverBmcTable, stateOf, type ServerBmcReads } from './table';

export interface ServerBmcPorts extends Omit<ServerBmcReads, 'now'> {
  writeStatus(status: NonNullable<ServerBMC['status']>): Promise<void>;
  /** The time a condition changes at (RFC 3339); default now. */
  now?(): string;
}

export async function reconcileServerBmc(
  bmc: ServerBMC,
  ports: ServerBmcPorts,
): Promise<void> {
  const reads: ServerBmcReads = {
    node: name => ports.node(name),
    secrets: ports.secrets,
    now: ports.now ?? (() => new Date().toISOString()),
  };
  await runPasses(bmc, async current => {
    const decision = await serverBmcTable[stateOf(current)](current, reads);
    if (decision.kind === 'done') return {};
    await ports.writeStatus(decision.status);
    // The watch brings the written object back; its next look finds it Checked.
    return {};
  });
}
