#!/usr/bin/env node
// A rolling reboot on the scale fixture: one MaintenancePlan (docs/plans.md) takes 50
// workers through intent reboot, 5 at a time (bench/lib/rollingPlan.mjs: the workers, the
// Talos emulator, the operator, the figures). Figures: the plan's wall time over the ideal
// schedule of its own steps, and the apiserver requests the operator made during the plan
// besides watches and writes. The figure is the last line.
//
//   node bench/plan.mjs                 # 50 workers, maxParallel 5, on a 5,000-node fixture
//   node bench/plan.mjs --quick         # 10 workers on a 200-node fixture (smoke)
//   node bench/plan.mjs --rack DIR      # on a running rack (the kept scale fixture)
import { parseFlags, runBench } from './lib/common.mjs';
import { ROLLING_PLAN_FLAGS, rollingPlanBench } from './lib/rollingPlan.mjs';

const USAGE =
  'usage: node bench/plan.mjs [--quick] [--rack DIR] [--workers N] [--max-parallel N] [--nodes N] [--pods N]';

runBench(
  'plan',
  async ctx => {
    const flags = parseFlags(process.argv.slice(2), ROLLING_PLAN_FLAGS, USAGE);
    await rollingPlanBench(ctx, flags, {
      name: 'plan',
      planName: 'bench-rolling-reboot',
      title: 'rolling reboot',
      planBody: { intent: 'reboot' },
      verb: 'reboot',
      stepText: f => `reboot ${f.rebootDownMs} ms down`,
    });
  },
  { timeoutMinutes: 45 },
);
