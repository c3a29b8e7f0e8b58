/*
 * A ServerBMC's lifecycle as a table on the one runner (runtime/lifecycle/table.ts). A
 * ServerBMC has no phase of its own: its state is whether its spec has been checked,
 * read from status.observedGeneration.
 *
 *   Unchecked -> record   what can be checked without calling the BMC (its Node exists, a
 *                         credentials override is readable), as a Ready condition and a
 *                         message; the record makes it Checked
 *   Checked   -> (done)   the BMC itself is called only when a verb is sent or read back,
 *                         and by the health sweep (health.ts): it sits on the management
 *                         network and is not polled here
 *
 * A row reads through ports and answers a decision; reconciler.ts writes it.
 */
import type {
  ServerBMC,
  ServerBMCStatus,
} from '@rackside/plugin-servers-common';
import type { SecretReader } from '../runtime/kube/secrets';
import { setCondition } from '../runtime/lifecycle/conditions';
import { finished, type Done } from '../runtime/lifecycle/table';
import type { NodeView } from '../runtime/nodeView';

/** What the rows read. */
export interface ServerBmcReads {
  node(name: string): NodeView | undefined;
  secrets: SecretReader;
  /** The time a condition changes at (RFC 3339). */
  now(): string;
}

export type ServerBmcState = 'Unchecked' | 'Checked';

export type ServerBmcDecision =
  | Done
  | { kind: 'record'; status: NonNullable<ServerBMCStatus> };

export type ServerBmcRow = (
  bmc: ServerBMC,
  reads: ServerBmcReads,
) => Promise<ServerBmcDecision>;

/** Checked once status.observedGeneration is the spec's generation. */
export function stateOf(bmc: ServerBMC): ServerBmcState {
  const generation = bmc.metadata.generation;
  return generation && bmc.status?.observedGeneration === generation
    ? 'Checked'
    : 'Unchecked';
}

function describe(bmc: ServerBMC): string {
  if (bmc.spec.systemPath) {
    return `BMC ${bmc.spec.address}, system ${bmc.spec.systemPath}`;
  }
  return `BMC ${bmc.spec.address}; the system is found by the node's system UUID when first used`;
}

/** Unchecked: what can be checked without the BMC, as the status to record. */
async function check(
  bmc: ServerBMC,
  reads: ServerBmcReads,
): Promise<ServerBmcDecision> {
  const generation = bmc.metadata.generation;
  const problems: string[] = [];
  if (!reads.node(bmc.metadata.name)) {
    problems.push(`no Node named ${bmc.metadata.name}`);
  }
  const override = bmc.spec.credentialsSecretRef;
  if (override) {
    try {
      await reads.secrets.read({ ...override, key: override.usernameKey });
      await reads.secrets.read({ ...override, key: override.passwordKey });
    } catch (error) {
      problems.push(`credentials: ${(error as Error).message}`);
    }
  }
  const ready = problems.length === 0;
  return {
    kind: 'record',
    status: {
      systemPath: bmc.spec.systemPath,
      message: ready ? describe(bmc) : problems.join('; '),
      conditions: setCondition(
        bmc.status?.conditions?.filter(c => c.type === 'Ready'),
        {
          type: 'Ready',
          status: ready ? 'True' : 'False',
          reason: ready ? 'Configured' : 'Misconfigured',
          message: ready ? 'The BMC is configured.' : problems.join('; '),
          observedGeneration: generation,
        },
        reads.now(),
      ),
      observedGeneration: generation,
    },
  };
}

export const serverBmcTable: Record<ServerBmcState, ServerBmcRow> = {
  Unchecked: check,
  Checked: finished,
};
