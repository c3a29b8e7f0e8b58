/*
 * The PowerProvider `default` as a table on the one runner (runtime/lifecycle/table.ts).
 * A PowerProvider has no phase of its own: its state is that of the channel this process
 * built from it, keyed by the object's uid and generation (a spec change rebuilds it).
 *
 *   Unbuilt -> build   no channel for this spec yet (or the last build failed: tried again
 *                      at each look); the reconciler builds it from the spec and its
 *                      Secrets and records channelStatus() of the outcome
 *   Gone    -> close   the PowerProvider was deleted: the channel is closed, nothing offered
 *   Built   -> (done)  the channel is this spec's
 *
 * channelStatus() is the decision the build is recorded as: what the channel may offer
 * with the capability rule applied (a shutdown nothing can undo is not advertised; an
 * unusable channel advertises nothing) and the Ready condition.
 */
import {
  advertise,
  offerFor,
  type PowerProvider,
  type PowerProviderStatus,
} from '@rackside/plugin-servers-common';
import { setCondition } from '../runtime/lifecycle/conditions';
import type { Done } from '../runtime/lifecycle/table';

export type ChannelState = 'Unbuilt' | 'Gone' | 'Built';

/** What this process has built: for which spec, and whether a channel is open. */
export interface BuiltChannelState {
  /** keyOf() of the PowerProvider the channel was last built for. */
  key: string | undefined;
  open: boolean;
}

export type ChannelDecision = Done | { kind: 'build' } | { kind: 'close' };

/** The spec a channel is built for: the object's uid and generation. */
export function keyOf(provider: PowerProvider | undefined): string | undefined {
  return provider
    ? `${provider.metadata.uid}/${provider.metadata.generation}`
    : undefined;
}

export function stateOf(
  provider: PowerProvider | undefined,
  built: BuiltChannelState,
): ChannelState {
  if (keyOf(provider) === built.key && (built.open || !provider))
    return 'Built';
  return provider ? 'Unbuilt' : 'Gone';
}

export const channelTable: Record<ChannelState, ChannelDecision> = {
  Unbuilt: { kind: 'build' },
  Gone: { kind: 'close' },
  Built: { kind: 'done' },
};

/** What a build came to: a channel (or none configured), or why none can be used. */
export type BuildOutcome = { ok: true } | { ok: false; message: string };

/** The status a build is recorded as (`at`: when the Ready condition changes). */
export function channelStatus(
  provider: PowerProvider,
  outcome: BuildOutcome,
  at: string,
): PowerProviderStatus {
  const { spec } = provider;
  const generation = provider.metadata.generation;
  const ready = outcome.ok
    ? {
        status: 'True' as const,
        reason: spec.type === 'none' ? 'NoChannel' : 'ChannelReady',
        message:
          spec.type === 'none'
            ? 'No power channel is configured: no power verb is offered.'
            : `The ${spec.type} channel is configured.`,
      }
    : {
        status: 'False' as const,
        reason: 'ChannelUnavailable',
        message: `The ${spec.type} channel cannot be used: ${outcome.message}`,
      };
  const can = advertise(outcome.ok ? spec.type : 'none', {
    attendedRack: spec.attendedRack,
  });
  const offered = offerFor(can);
  return {
    reboot: offered.includes('reboot'),
    shutdown: offered.includes('shutdown'),
    powerOn: offered.includes('power-on'),
    confirmsPowerOff: can.confirmsPowerOff,
    conditions: setCondition(
      provider.status?.conditions?.filter(c => c.type === 'Ready'),
      {
        type: 'Ready',
        ...ready,
        message: ready.message.slice(0, 32768),
        observedGeneration: generation,
      },
      at,
    ),
    observedGeneration: generation,
  };
}
