/*
 * The quorum of a cluster as the API answers it (the cluster list, a pre-flight's
 * filtered copy), from the derivation the snapshot holds.
 */
import type {
  QuorumDerivation,
  QuorumSummaryResponse,
} from '@rackside/plugin-servers-common';

export function quorumSummary(
  derivation: QuorumDerivation,
): QuorumSummaryResponse {
  return derivation.derived
    ? {
        derived: true as const,
        members: derivation.members,
        quorum: derivation.quorum,
        ready: derivation.ready,
        margin: derivation.margin,
        goingDown: derivation.goingDown,
      }
    : { derived: false as const, reason: derivation.reason };
}
