// Worker of bench/bmc-health-requests.mjs, run under backstage-cli's node transform (it
// requires the TypeScript of servers-node as the operator does): reads a DMTF mockup BMC
// (servers-node's mockupBmc.ts) with the operator's reader and prints, as JSON, the HTTP
// requests each kind of reading made.
const path = require('node:path');

const ROOT = path.resolve(__dirname, '../..');
const REDFISH = path.join(ROOT, 'plugins/servers-node/src/power/redfish');
const { MockupBmc, mockupDir } = require(path.join(REDFISH, 'mockupBmc.ts'));
const { RedfishClient } = require(path.join(REDFISH, 'RedfishClient.ts'));
const { BmcRateLimiter } = require(path.join(REDFISH, 'rateLimit.ts'));
const { BmcHealthReader } = require(path.join(REDFISH, 'readHealth.ts'));

const SYSTEM = '/redfish/v1/Systems/437XR1138R2';

async function measure({ expand }) {
  const bmc = await new MockupBmc({
    dir: mockupDir(ROOT, 'public-rackmount1'),
  }).start();
  if (!expand) {
    bmc.edit('/redfish/v1', json => {
      delete json.ProtocolFeaturesSupported;
    });
  }
  const client = new RedfishClient({
    address: bmc.url,
    credentials: { username: 'admin', password: 'p4ss-w0rd!' },
    rateLimiter: new BmcRateLimiter({ minIntervalMs: 0 }),
  });
  const reader = new BmcHealthReader(client, SYSTEM);
  const count = async fn => {
    const before = bmc.requests.length;
    await fn();
    return bmc.requests.slice(before).map(r => `${r.method} ${r.path}`);
  };
  try {
    const first = await count(() => reader.read());
    const full = await count(() => reader.read());
    const summary = await count(() => reader.summary());
    return { first, full, summary };
  } finally {
    await client.close();
    await bmc.stop();
  }
}

(async () => {
  const withExpand = await measure({ expand: true });
  const withoutExpand = await measure({ expand: false });
  process.stdout.write(`${JSON.stringify({ withExpand, withoutExpand })}\n`);
})().catch(error => {
  process.stderr.write(`${error.stack ?? error}\n`);
  process.exit(1);
});
