#!/usr/bin/env node
// A rolling Talos upgrade on the scale fixture (docs/plans.md, "Rolling upgrades"): one
// MaintenancePlan takes 50 workers through intent upgrade, 5 at a time. Each step drains
// its worker, sends MachineService.Upgrade once to the Talos emulator (its installer runs
// --upgrade-delay-ms, then the machine reboots into the new version and its Node's osImage
// names it), and is Done once the node is back Ready on the target. The workers, the
// emulator, the operator and the figures are bench/lib/rollingPlan.mjs's, as for the
// rolling reboot (bench/plan.mjs). Checked: one Upgrade and no reboot per machine, every
// Node on the target, the plan's status.upgrade "50 of 50 at v1.14.0". The figure, last:
// the plan's wall time over the ideal schedule of its own steps (goal <= 1.05).
//
//   node bench/plan-upgrade.mjs               # 50 workers, maxParallel 5, on a 5,000-node fixture
//   node bench/plan-upgrade.mjs --quick       # 10 workers on a 200-node fixture (smoke)
//   node bench/plan-upgrade.mjs --rack DIR    # on a running rack (the kept scale fixture)
import { parseFlags, runBench } from './lib/common.mjs';
import { ROLLING_PLAN_FLAGS, rollingPlanBench } from './lib/rollingPlan.mjs';

const USAGE =
  'usage: node bench/plan-upgrade.mjs [--quick] [--rack DIR] [--workers N] [--max-parallel N] [--nodes N] [--pods N] [--upgrade-delay-ms MS]';
const FLAGS = {
  ...ROLLING_PLAN_FLAGS,
  upgradeDelayMs: {
    type: 'number',
    default: 2000,
    help: "how long the emulator's installer runs before the machine reboots",
  },
};

/** The installer the plan installs: newer than what the emulator's machines run (v1.13.9). */
const PREFIX = 'factory.talos.dev/installer/';
const TARGET = 'v1.14.0';
const IMAGE = `${PREFIX}${'0'.repeat(64)}:${TARGET}`;

runBench(
  'plan-upgrade',
  async ctx => {
    const flags = parseFlags(process.argv.slice(2), FLAGS, USAGE);
    await rollingPlanBench(ctx, flags, {
      name: 'plan-upgrade',
      planName: 'bench-rolling-upgrade',
      title: 'rolling Talos upgrade',
      planBody: { intent: 'upgrade', upgrade: { image: IMAGE } },
      verb: 'upgrade',
      timing: { upgradeDelayMs: flags.upgradeDelayMs },
      // The operator sends only images its allowed prefixes name (docs/upgrades.md).
      operatorArgs: ['--talos-image-prefixes', PREFIX],
      stepText: f =>
        `upgrade: installer ${f.upgradeDelayMs} ms, reboot ${f.rebootDownMs} ms down`,
      check(plan, nodes) {
        const notOnTarget = nodes.filter(
          n => n.status?.nodeInfo?.osImage !== `Talos (${TARGET})`,
        );
        if (notOnTarget.length)
          throw new Error(
            `not on ${TARGET}: ${notOnTarget
              .map(n => `${n.metadata.name} (${n.status?.nodeInfo?.osImage})`)
              .join(', ')}`,
          );
        const total = plan.status.nodes.length;
        const want = `${total} of ${total} at ${TARGET}`;
        if (plan.status.upgrade?.summary !== want)
          throw new Error(
            `the plan's summary is ${JSON.stringify(
              plan.status.upgrade?.summary,
            )}, not ${want}`,
          );
      },
      lines: plan => [
        `versions: ${plan.status.upgrade.summary} (each step ${
          plan.status.nodes[0]?.talosVersion?.before ?? '?'
        } -> ${plan.status.nodes[0]?.talosVersion?.after ?? '?'})`,
      ],
    });
  },
  { timeoutMinutes: 45 },
);
