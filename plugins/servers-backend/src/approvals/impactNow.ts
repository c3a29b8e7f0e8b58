/*
 * The impact of a held request now, for an approver (docs/approvals.md): the server
 * pre-flight of a maintenance (its node, its intent, its drain options) or the plan
 * pre-flight of a plan's remaining steps, each with its token issued to the approver, and
 * the rung it puts the request on. A cordon has no pre-flight: its rung is the guard's.
 */
import {
  ceremonyFor,
  guard,
  PREFLIGHT_CEREMONY_LEVELS,
  type CeremonyLevel,
  type PlanPreflightResponse,
  type PreflightAction,
  type PreflightResponse,
} from '@rackside/plugin-servers-common';
import { highestRung } from '../approval/heldApproval';
import type { ClusterSnapshot } from '../cluster/types';
import { currentImpact } from '../preflight/impact';
import type { PreflightImpact } from '../preflight/preflight';
import type { ApprovalCommandContext, ApprovalGrant } from './ApprovalsService';
import type { HeldRequest } from './heldRequest';

/** What a held request would do now. */
export type ImpactNow =
  | {
      kind: 'cordon';
      rungNow: CeremonyLevel;
    }
  | {
      kind: 'maintenance';
      rungNow: CeremonyLevel;
      /** Unsigned: what the approver's token must bind. */
      impact: PreflightImpact;
      /** As the approver is shown it (their read scope), with their token. */
      shown: PreflightResponse;
    }
  | {
      kind: 'plan';
      rungNow: CeremonyLevel;
      shown: PlanPreflightResponse;
    };

/** The rung a plan pre-flight puts a plan on: its highest step's, or refused. */
export function planRungOf(preflight: PlanPreflightResponse): CeremonyLevel {
  const levels = preflight.nodes.map(n => n.ceremony.level);
  if (!preflight.canProceed || levels.includes('refused')) return 'refused';
  return highestRung(
    levels.filter((l): l is (typeof PREFLIGHT_CEREMONY_LEVELS)[number] =>
      (PREFLIGHT_CEREMONY_LEVELS as readonly string[]).includes(l),
    ),
  );
}

export async function impactNow(
  ctx: ApprovalCommandContext,
  grant: ApprovalGrant,
  snap: ClusterSnapshot,
  request: HeldRequest,
  user: string,
): Promise<ImpactNow> {
  const { cluster, scope } = grant;
  if (request.plan) {
    const shown = await ctx.planPreflights.now(
      cluster,
      snap,
      scope,
      request.plan,
      user,
    );
    return { kind: 'plan', rungNow: planRungOf(shown), shown };
  }
  const m = request.maintenance!;
  const nodeName = m.spec.nodeName;
  if (m.spec.intent === 'cordon') {
    const verdict = guard(
      { action: 'cordon', nodeName },
      snap.derivation,
      snap.facts,
    );
    return {
      kind: 'cordon',
      rungNow: ceremonyFor('cordon', verdict.verdict).level,
    };
  }
  const impact = await currentImpact(
    cluster,
    snap,
    nodeName,
    m.spec.intent as PreflightAction,
    {
      deleteEmptyDirData: m.spec.drain?.deleteEmptyDirData === true,
      force: m.spec.drain?.force === true,
      allowNodeLocalData: m.spec.drain?.allowNodeLocalData === true,
    },
  );
  const rungNow = impact.canProceed ? impact.ceremony.level : 'refused';
  return {
    kind: 'maintenance',
    rungNow,
    impact,
    shown: scope.preflightOf(snap, ctx.preflightTokens.sign(impact, user)),
  };
}
