// Worker of bench/bmc-sweep-memory.mjs, run under backstage-cli's node transform: the
// operator's own health sweep (packages/operator's HealthMonitor, reading through
// servers-node's RedfishPowerChannel as the operator does) over the fake BMCs the parent
// serves on loopback, with in-memory caches in place of the apiserver's. It samples its own
// resident set while the sweep runs and prints, as JSON on its last line, the peak, the
// duration, and what each BMC's reading said.
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const { RedfishPowerChannel } = require(path.join(
  ROOT,
  'plugins/servers-node/src/power/redfish/RedfishPowerChannel.ts',
));
const { HealthMonitor } = require(path.join(
  ROOT,
  'packages/operator/src/serverbmc/health.ts',
));

/** A watch cache over a Map: what the HealthMonitor asks of the operator's caches. */
function cacheOf(items) {
  return {
    get: name => items.get(name),
    list: () => [...items.values()],
    on: () => () => undefined,
  };
}

(async () => {
  const config = JSON.parse(process.argv[2]);
  const bmcs = new Map(
    config.bmcs.map(({ name, url }) => [
      name,
      {
        apiVersion: 'rackside.dev/v1alpha1',
        kind: 'ServerBMC',
        metadata: { name, uid: name },
        spec: { address: url, systemPath: '/redfish/v1/Systems/1' },
      },
    ]),
  );
  const channel = new RedfishPowerChannel({
    resolveBmc: node => ({
      address: bmcs.get(node.name).spec.address,
      systemPath: '/redfish/v1/Systems/1',
      credentials: { username: 'bench', password: 'bench' },
    }),
    tls: {},
    minIntervalMs: config.minIntervalMs,
  });
  const written = new Map();
  let allWritten;
  const done = new Promise(resolve => {
    allWritten = resolve;
  });
  const monitor = new HealthMonitor({
    bmcs: cacheOf(bmcs),
    nodes: cacheOf(new Map()),
    maintenances: cacheOf(new Map()),
    reader: (_node, name) => channel.healthReader({ name }),
    scrub: (_name, text) => text,
    writeHealth: async (name, health) => {
      const bmc = bmcs.get(name);
      bmc.status = { health: { ...bmc.status?.health, ...health } };
      if (health.readAt !== undefined || health.error) {
        written.set(name, health.error ? `error: ${health.error}` : 'read');
      }
      if (written.size === bmcs.size) allWritten();
    },
    writeHardware: async () => undefined,
    recorder: { record: async () => undefined },
    log: () => undefined,
    // Every BMC is due at once (random() = 0): one sweep of the whole rack.
    intervalMs: 3_600_000,
    concurrency: config.concurrency,
    readingDeadlineMs: config.deadlineMs,
    random: () => 0,
  });
  global.gc?.();
  const baseline = process.memoryUsage().rss;
  let peak = baseline;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage().rss);
  }, 5);
  const started = Date.now();
  monitor.start();
  await done;
  const durationMs = Date.now() - started;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  monitor.pause();
  await channel.close();
  const outcomes = {};
  for (const [name, outcome] of written) outcomes[name] = outcome;
  process.stdout.write(
    `${JSON.stringify({ baseline, peak, durationMs, outcomes })}\n`,
  );
  process.exit(0);
})().catch(error => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
