/*
 * Runs the table of plan/table.ts for one MaintenancePlan (with the table runner of
 * runtime/lifecycle/table.ts): pick the row, let it decide, apply the decision at the edges
 * (status, step creation, abandon flags, Events), and ask again until a row waits.
 *
 * A step is created before status records it, under a fixed name (`<plan>-<node>`): a
 * create answered AlreadyExists means the step was started already (before a restart),
 * and the next pass adopts it from the NodeMaintenance; no step is ever created twice.
 * The status that records it is first written as a dry run, so no step is created while
 * the plan's status cannot be written (it would run with nobody told).
 *
 * Every status is cut to its schema (statusLimits.ts) before it is written; a write that
 * still fails (other than a conflict, which is retried) is a Warning Event, a metric and
 * a warn line, so a plan whose status is stuck is seen.
 */
import {
  PLAN_PREFLIGHT_TAKEN_AT,
  stepAcknowledgement,
  stepAcknowledgedRung,
  type MaintenancePlan,
  type MaintenancePlanStatus,
  type NodeMaintenance,
  type PlanNode,
  type PreflightCeremonyLevel,
  type RequestFlag,
  rungGrewPast,
} from '@rackside/plugin-servers-common';
import { ConflictError } from '@backstage/errors';
import { PlanReason } from '../runtime/lifecycle/reasons';
import type { OperatorLog } from '../runtime/logger';
import { fitPlanStatus } from './statusLimits';
import { isoOf, requeueOf, runPasses } from '../runtime/lifecycle/table';
import { planRowFor, type PlanDecision, type PlanView } from './table';
import { stepBody } from './upgradeSteps';

export interface PlanPorts {
  view: PlanView & { plan(name: string): MaintenancePlan | undefined };
  /**
   * Writes status; fails (ConflictError) if `plan` is no longer the current version.
   * With `dryRun` the apiserver validates and admits it, and stores nothing.
   */
  writeStatus(
    plan: MaintenancePlan,
    status: MaintenancePlanStatus,
    options?: { dryRun?: boolean },
  ): Promise<MaintenancePlan>;
  /** A status write failed for another reason than a conflict (counted as a metric). */
  statusWriteFailed?(plan: MaintenancePlan, error: unknown): void;
  /**
   * Creates the step's NodeMaintenance, owned by the plan, with its intent, reason,
   * requester and drain options. Resolves `false` when it exists already.
   */
  createStep(
    plan: MaintenancePlan,
    step: PlanNode,
    maintenance: string,
  ): Promise<boolean>;
  /** Sets spec.abandon on a step's NodeMaintenance (set once: an existing one stays). */
  abandonStep(maintenance: string, flag: RequestFlag): Promise<void>;
  events: {
    record(
      plan: MaintenancePlan,
      type: 'Normal' | 'Warning',
      reason: string,
      message: string,
    ): Promise<void>;
  };
  log?: OperatorLog;
}

export class PlanReconciler {
  constructor(private readonly ports: PlanPorts) {}

  /** Reconciles one plan until it waits or ends; answers when to look again on time. */
  async reconcile(name: string): Promise<{ requeueAfterMs?: number }> {
    return runPasses(this.ports.view.plan(name), async plan => {
      const decision = await planRowFor(plan)(plan, this.ports.view);
      const next = await this.apply(plan, decision);
      return {
        next,
        requeueAfterMs: requeueOf(decision) ?? requeueOfWrite(decision),
      };
    });
  }

  private async apply(
    plan: MaintenancePlan,
    decision: PlanDecision,
  ): Promise<MaintenancePlan | undefined> {
    switch (decision.kind) {
      case 'write': {
        const written = await this.writeStatus(plan, decision.status);
        if (decision.event) {
          await this.record(
            plan,
            decision.event.type,
            decision.event.reason,
            decision.event.message,
          );
        }
        return written;
      }
      case 'start': {
        // The status that records the step must be writable before the step exists.
        await this.writeStatus(plan, decision.status, { dryRun: true });
        const created = await this.ports.createStep(
          plan,
          decision.step,
          decision.maintenance,
        );
        const written = await this.writeStatus(plan, decision.status);
        await this.record(
          plan,
          'Normal',
          PlanReason.StepStarted,
          `${decision.step.name}: NodeMaintenance ${decision.maintenance}${
            created ? '' : ' (already there: adopted)'
          }`,
        );
        return written;
      }
      case 'abandon': {
        const flag: RequestFlag = {
          by: decision.by,
          reason: `plan ${plan.metadata.name} cancelled: ${decision.reason}`,
          at: isoOf(this.ports.view),
        };
        for (const name of decision.maintenances) {
          await this.ports.abandonStep(name, flag);
        }
        await this.record(
          plan,
          'Normal',
          PlanReason.StepsAbandoned,
          `abandoned on cancel: ${decision.maintenances.join(', ')}`,
        );
        // The steps' own updates wake the plan again once they have taken the flag.
        return undefined;
      }
      default:
        return undefined;
    }
  }

  /** Writes the status cut to its schema; a failure other than a conflict is reported. */
  private async writeStatus(
    plan: MaintenancePlan,
    status: MaintenancePlanStatus,
    options: { dryRun?: boolean } = {},
  ): Promise<MaintenancePlan> {
    try {
      return await this.ports.writeStatus(plan, fitPlanStatus(status), options);
    } catch (error) {
      if (error instanceof ConflictError) throw error;
      const message = `status of MaintenancePlan ${
        plan.metadata.name
      } not written${options.dryRun ? ' (dry run before a step)' : ''}: ${
        (error as Error).message
      }`;
      this.ports.statusWriteFailed?.(plan, error);
      this.ports.log?.(message, {
        level: 'warn',
        kind: 'MaintenancePlan',
        name: plan.metadata.name,
        phase: plan.status?.phase,
        reason: PlanReason.StatusWriteFailed,
      });
      await this.record(plan, 'Warning', PlanReason.StatusWriteFailed, message);
      throw error;
    }
  }

  private async record(
    plan: MaintenancePlan,
    type: 'Normal' | 'Warning',
    reason: string,
    message: string,
  ): Promise<void> {
    await this.ports.events.record(plan, type, reason, message).catch(error => {
      this.ports.log?.(
        `event on MaintenancePlan ${plan.metadata.name}: ${
          (error as Error).message
        }`,
      );
    });
  }
}

function requeueOfWrite(decision: PlanDecision): number | undefined {
  return decision.kind === 'write' ? decision.requeueAfterMs : undefined;
}

/**
 * The rung a step is held to: the one its node was acknowledged at, and, on a plan held
 * for approval, never above the rung its approver approved (the step's admission and its
 * power verb refuse what grew past it). A step carries no approval of its own: only the
 * Rackside backend writes one, and the plan's covers its steps.
 */
export function stepRung(
  plan: MaintenancePlan,
  node: string,
): PreflightCeremonyLevel {
  const acknowledged = stepAcknowledgedRung(plan.spec, node);
  const approval = plan.spec.approval;
  const approved = approval?.approvedBy
    ? approval.approvedRung ?? approval.requestedRung
    : undefined;
  return approved && rungGrewPast(approved, acknowledged)
    ? approved
    : acknowledged;
}

/** The NodeMaintenance a step is: owned by its plan (controller), with the plan's request. */
export function stepObject(
  plan: MaintenancePlan,
  step: PlanNode,
  maintenance: string,
): NodeMaintenance {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: {
      name: maintenance,
      labels: { 'rackside.dev/plan': plan.metadata.name },
      ownerReferences: [
        {
          apiVersion: plan.apiVersion,
          kind: 'MaintenancePlan',
          name: plan.metadata.name,
          uid: plan.metadata.uid ?? '',
          controller: true,
        },
      ],
    },
    spec: {
      nodeName: step.name,
      intent: plan.spec.intent,
      reason: plan.spec.reason,
      ...(plan.spec.requestedBy ? { requestedBy: plan.spec.requestedBy } : {}),
      // The rung the plan's requester acknowledged for this node: the step's admission
      // and its power verb are held to it, as a single maintenance's are.
      preflight: {
        // The pre-flight of whoever acknowledged this step last (a renewer's, if any).
        takenAt:
          stepAcknowledgement(plan.spec, step.name)?.preflightTakenAt ??
          plan.metadata.annotations?.[PLAN_PREFLIGHT_TAKEN_AT] ??
          plan.metadata.creationTimestamp ??
          new Date(0).toISOString(),
        ceremony: stepRung(plan, step.name),
      },
      ...(plan.spec.drain ? { drain: plan.spec.drain } : {}),
      // The upgrade or firmware update every step asks, exactly as the plan says it.
      ...stepBody(plan),
    },
  };
}
