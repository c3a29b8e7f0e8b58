import {
  PlanPreflightLimiter,
  TooManyPlanPreflightsError,
} from '../preflight/planPreflightLimiter';
import type { PreflightTokens } from '../preflight/tokens';
import { planApprovalPreflights } from './planApprovalPreflight';

describe('planApprovalPreflights', () => {
  it("takes each approver's plan view from the per-user plan pre-flight limit before computing anything", async () => {
    const port = planApprovalPreflights(
      {} as PreflightTokens,
      new PlanPreflightLimiter(0),
    );
    // Nothing else is given: a view refused by the limit never reaches the cluster.
    await expect(
      port.now(
        undefined as any,
        undefined as any,
        undefined as any,
        undefined as any,
        'user:default/approver',
      ),
    ).rejects.toBeInstanceOf(TooManyPlanPreflightsError);
  });
});
