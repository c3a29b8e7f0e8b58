// Worker of bench/bmc-health-requests.mjs, run under backstage-cli's node transform (it
// requires the TypeScript of servers-node as the operator does): reads a DMTF mockup BMC
// (MockupBmc of servers-node's testing entry point) with the operator's reader and prints,
// as JSON, the HTTP requests each kind of reading made.
const path = require('node:path');
const {
  BmcHealthReader,
  BmcRateLimiter,
  RedfishClient,
} = require('@rackside/plugin-servers-node');
const {
  MockupBmc,
  mockupDir,
} = require('@rackside/plugin-servers-node/testing');

const ROOT = path.resolve(__dirname, '../..');

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
