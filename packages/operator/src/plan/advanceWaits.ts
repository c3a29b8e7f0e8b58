/*
 * The `advance` rules that hold a plan (table.ts, ADVANCE_RULES): pause, window,
 * capacity, authority.
 */
import {
  isPlanPaused,
  planAuthority,
  planWindowVerdict,
} from '@rackside/plugin-servers-common';
import { PlanReason } from '../runtime/lifecycle/reasons';
import { openText, phased, settle, stop, waitOn } from './advanceHelpers';
import { countsOf, iso } from './steps';
import { type Advance, type AdvanceRule, untilThen } from './types';

export const pauseRule: AdvanceRule = a => {
  const pause = a.plan.spec.pause;
  if (!pause || !isPlanPaused(a.plan.spec)) return undefined;
  const message = `paused by ${pause.by}: ${pause.reason}`;
  return settle(
    a,
    phased(
      a.status,
      'Paused',
      a.open.length ? `${message}; running: ${openText(a.open)}` : message,
      waitOn(a.status, { on: 'pause', message }, a.now),
    ),
    undefined,
    a.plan.status?.phase === 'Paused'
      ? undefined
      : { type: 'Normal', reason: PlanReason.Paused, message },
  );
};

export const windowRule: AdvanceRule = a => {
  const verdict = planWindowVerdict(a.plan.spec.window, a.now);
  if (verdict.open) return undefined;
  if (verdict.opensAt === undefined) {
    return stop(
      a,
      'WindowClosed',
      `${verdict.message}: ${countsOf(a.steps).pending} step(s) not started`,
    );
  }
  return settle(
    a,
    phased(
      a.status,
      a.open.length ? 'Running' : 'Waiting',
      a.open.length
        ? `${verdict.message}; running: ${openText(a.open)}`
        : verdict.message,
      waitOn(
        a.status,
        {
          on: 'window',
          message: verdict.message,
          until: iso(verdict.opensAt),
        },
        a.now,
      ),
    ),
    untilThen(verdict.opensAt, a.now),
  );
};

/**
 * What the plan waits on while steps are open: their healthy return when one is being
 * checked (its node back, not yet proven healthy), else the steps.
 */
function openStepsWait(a: Advance, message: string) {
  if (a.returning.length > 0) {
    return waitOn(
      a.status,
      { on: 'healthyReturn', message: openText(a.returning) },
      a.now,
    );
  }
  return waitOn(a.status, { on: 'step', message }, a.now);
}

export const capacityRule: AdvanceRule = a => {
  const next = a.steps.find(s => s.phase === 'Pending');
  if (!next) {
    return settle(
      a,
      phased(
        a.status,
        'Running',
        `${a.open.length} step(s) running: ${openText(a.open)}`,
        openStepsWait(a, openText(a.open)),
      ),
    );
  }
  const limit = next.controlPlane ? 1 : a.plan.spec.maxParallel;
  if (a.open.length < limit) return undefined;
  const why = next.controlPlane
    ? `control-plane nodes go one at a time: ${next.name} waits for ${openText(
        a.open,
      )}`
    : `${a.open.length} of ${limit} steps open: ${openText(a.open)}`;
  return settle(a, phased(a.status, 'Running', why, openStepsWait(a, why)));
};

export const authorityRule: AdvanceRule = a => {
  const authority = planAuthority(
    a.plan.spec,
    a.plan.metadata.creationTimestamp,
    a.now,
  );
  if (authority.valid) return undefined;
  const wait = waitOn(
    a.status,
    { on: 'authorization', message: authority.message },
    a.now,
  );
  const news = a.plan.status?.waiting?.on !== 'authorization';
  return settle(
    a,
    phased(
      a.status,
      a.open.length ? 'Running' : 'Waiting',
      a.open.length
        ? `${authority.message}; running: ${openText(a.open)}`
        : authority.message,
      wait,
    ),
    undefined,
    news
      ? {
          type: 'Warning',
          reason: PlanReason.AuthorizationExpired,
          message: authority.message,
        }
      : undefined,
  );
};
