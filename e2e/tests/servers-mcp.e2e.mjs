// The demo's MCP endpoint (@backstage/plugin-mcp-actions-backend at
// /api/mcp-actions/v1) driven by the official MCP client SDK, as two users of
// examples/org.yaml, against the demo backend on its own rack (offset 7: net
// 197, port 7014): the admin (user:default/guest, plant-admins) lists the
// tools with their hints, lists clusters and servers, gets a drain pre-flight
// and cordons a worker, which the operator then cordons; the viewer
// (plant-viewers, read only) lists the same servers, and its pre-flight and
// cordon are denied with nothing written. An agent's hazard reboot of a
// control-plane member is refused (a person must do it in the portal), nothing
// written. Both users' attempts are in the backend's audit log, marked as
// coming through the actions registry.
//
// Two users, one backend: each signs in through the guest provider's API
// (GET /api/auth/guest/refresh, as the browser does), and the guest provider
// reads auth.providers.guest.userEntityRef at each sign-in from a config file
// of this test that the backend watches; the test rewrites it between the two
// sign-ins and waits until the provider signs in the new user. The first
// user's token stays valid.
//
//   node --test e2e/tests/servers-mcp.e2e.mjs
import { after, before, test } from 'node:test';
import assert from 'node:assert/strict';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { eventually, startPortal } from './harness.mjs';

const CLUSTER = 'plant-a';
/** The admin cordons this one; the viewer tries the other. */
const ADMIN_NODE = 'worker-3';
const VIEWER_NODE = 'worker-5';
const ADMIN = 'user:default/guest';
const VIEWER = 'user:default/viewer';

let portal;
let workDir;
let guestConfig;
const clients = [];

const writeGuest = userRef =>
  fs.writeFileSync(
    guestConfig,
    `auth:\n  providers:\n    guest:\n      userEntityRef: ${userRef}\n`,
  );

before(
  async () => {
    workDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-mcp-'));
    guestConfig = path.join(workDir, 'app-config.guest.yaml');
    writeGuest(ADMIN);
    portal = await startPortal({ offset: 7, configs: [guestConfig] });
  },
  { timeout: 600_000 },
);

after(async () => {
  for (const c of clients) await c.close().catch(() => {});
  await portal?.stop();
  if (workDir) fs.rmSync(workDir, { recursive: true, force: true });
});

/** The `sub` of a Backstage token (a JWT). */
const subjectOf = token =>
  JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).sub;

/** Signs in through the guest provider's API and answers the user's token. */
async function guestToken() {
  const res = await fetch(`${portal.baseUrl}/api/auth/guest/refresh`, {
    headers: { 'x-requested-with': 'XMLHttpRequest' },
  });
  assert.equal(res.status, 200, await res.clone().text());
  return (await res.json()).backstageIdentity.token;
}

/**
 * A token of `userRef`, once the guest provider signs that user in and the
 * catalog knows them (the policy reads their groups from the catalog, which
 * may still be reading examples/org.yaml when the backend answers).
 */
async function tokenOf(userRef) {
  writeGuest(userRef);
  const [, namespace, name] = userRef.match(/^user:(\w+)\/(.+)$/);
  return eventually(
    `the guest provider signs in ${userRef}, known to the catalog`,
    async () => {
      const token = await guestToken();
      if (subjectOf(token) !== userRef) return false;
      const res = await fetch(
        `${portal.baseUrl}/api/catalog/entities/by-name/user/${namespace}/${name}`,
        { headers: { authorization: `Bearer ${token}` } },
      );
      return res.ok && token;
    },
    { timeoutMs: 120_000, everyMs: 500 },
  );
}

/** An MCP client of the demo's endpoint, with the user's token on every request. */
async function mcpClient(token) {
  const client = new Client({ name: 'rackside-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(
      new URL(`${portal.baseUrl}/api/mcp-actions/v1`),
      { requestInit: { headers: { Authorization: `Bearer ${token}` } } },
    ),
  );
  clients.push(client);
  return client;
}

/** Calls a tool that must succeed; answers its structured output. */
async function call(client, name, args) {
  const result = await client.callTool({ name, arguments: args });
  assert.ok(!result.isError, `${name}: ${JSON.stringify(result.content)}`);
  return result.structuredContent;
}

const maintenanceNames = () =>
  portal
    .kubectl('get', 'nodemaintenances', '-A', '-o', 'name')
    .trim()
    .split('\n')
    .filter(Boolean)
    .sort();

const unschedulable = node =>
  portal
    .kubectl('get', 'node', node, '-o', 'jsonpath={.spec.unschedulable}')
    .trim();

/**
 * One value of the backend's development log format (`key=value`, the value
 * JSON when it is an object, a string or a literal) starting at `i`.
 */
function valueAt(text, i) {
  const open = text[i];
  if (open !== '{' && open !== '[' && open !== '"') {
    const end = text.indexOf(' ', i);
    return text.slice(i, end === -1 ? undefined : end);
  }
  let depth = 0;
  let inString = false;
  for (let j = i; j < text.length; j++) {
    const c = text[j];
    if (inString) {
      if (c === '\\') j++;
      else if (c === '"') {
        inString = false;
        if (depth === 0) return text.slice(i, j + 1);
      }
    } else if (c === '"') inString = true;
    else if (c === '{' || c === '[') depth++;
    else if (c === '}' || c === ']') {
      depth--;
      if (depth === 0) return text.slice(i, j + 1);
    }
  }
  return text.slice(i);
}

/** An audit line of the backend's log as an object: JSON, or the development format. */
function auditRecordOf(line) {
  if (line.startsWith('{')) return JSON.parse(line);
  // timestamp, logger (the plugin), level, message, then key=value fields.
  const plain = line.replace(/\x1b\[[0-9;]*m/g, '');
  const record = { plugin: plain.split(' ')[1] };
  for (const m of plain.matchAll(/ (\w+)=/g)) {
    const raw = valueAt(plain, m.index + m[0].length);
    try {
      record[m[1]] = JSON.parse(raw);
    } catch {
      record[m[1]] = raw;
    }
  }
  return record;
}

/** The audit events the backend logged (Backstage's auditor, through its logger). */
function auditEvents() {
  const text = fs.readFileSync(path.join(portal.logs, 'backend.log'), 'utf8');
  return text
    .split('\n')
    .filter(line => line.includes('isAuditEvent'))
    .map(auditRecordOf)
    .filter(e => e.isAuditEvent === true);
}

/** Waits for an ended audit event matching `predicate`. */
const auditEvent = (what, predicate) =>
  eventually(
    what,
    () => auditEvents().find(e => e.status !== 'initiated' && predicate(e)),
    { timeoutMs: 30_000, everyMs: 500 },
  );

test(
  'MCP: the admin lists, pre-flights and cordons; the viewer reads and is denied, nothing written; both audited as via actions',
  { timeout: 300_000 },
  async () => {
    const admin = await mcpClient(await tokenOf(ADMIN));

    // The servers plugin's tools, namespaced by plugin, with their hints.
    const { tools } = await admin.listTools();
    const byName = new Map(tools.map(t => [t.name, t]));
    const hints = name => {
      const a = byName.get(name)?.annotations;
      assert.ok(a, `tool ${name} listed (got ${[...byName.keys()]})`);
      return [a.readOnlyHint, a.destructiveHint, a.idempotentHint];
    };
    assert.deepEqual(hints('servers.list-servers'), [true, false, true]);
    assert.deepEqual(hints('servers.preflight-server-action'), [
      true,
      false,
      true,
    ]);
    assert.deepEqual(hints('servers.cordon-server'), [false, false, false]);
    assert.deepEqual(hints('servers.drain-server'), [false, true, false]);
    assert.deepEqual(hints('servers.reboot-server'), [false, true, false]);
    // The request asks for what the Servers page asks for.
    assert.deepEqual(
      byName.get('servers.cordon-server').inputSchema.required.sort(),
      ['cluster', 'node', 'reason'],
    );

    const { clusters } = await call(admin, 'servers.list-clusters', {});
    assert.ok(
      clusters.some(c => c.name === CLUSTER),
      JSON.stringify(clusters),
    );
    const { servers } = await call(admin, 'servers.list-servers', {
      cluster: CLUSTER,
    });
    const row = servers.find(s => s.name === ADMIN_NODE);
    assert.ok(row, `${ADMIN_NODE} listed`);
    assert.equal(row.actions.cordon, 'reason', JSON.stringify(row.actions));

    const { preflight } = await call(admin, 'servers.preflight-server-action', {
      cluster: CLUSTER,
      node: ADMIN_NODE,
      action: 'drain',
    });
    assert.equal(preflight.node, ADMIN_NODE);
    assert.ok(Array.isArray(preflight.evict), JSON.stringify(preflight));
    assert.ok(preflight.token?.length > 20, 'the pre-flight has its token');

    const before = maintenanceNames();
    const reason = 'e2e: cordoned through MCP by the admin';
    const cordoned = await call(admin, 'servers.cordon-server', {
      cluster: CLUSTER,
      node: ADMIN_NODE,
      reason,
    });
    assert.match(cordoned.maintenance, new RegExp(`^${ADMIN_NODE}-cordon-`));
    assert.equal(cordoned.created, true);
    const written = JSON.parse(
      portal.kubectl(
        'get',
        'nodemaintenance',
        cordoned.maintenance,
        '-o',
        'json',
      ),
    );
    assert.deepEqual(
      {
        nodeName: written.spec.nodeName,
        intent: written.spec.intent,
        requestedBy: written.spec.requestedBy,
        reason: written.spec.reason,
      },
      { nodeName: ADMIN_NODE, intent: 'cordon', requestedBy: ADMIN, reason },
    );
    // The operator carries it out.
    await eventually(
      `${ADMIN_NODE} cordoned by the operator`,
      () => unschedulable(ADMIN_NODE) === 'true',
      { timeoutMs: 60_000 },
    );
    assert.deepEqual(
      maintenanceNames(),
      [
        ...before,
        `nodemaintenance.rackside.dev/${cordoned.maintenance}`,
      ].sort(),
    );

    // A hazard reboot asked by an agent, with everything a person would give (the
    // pre-flight's token and the node's name typed): a person must do it in the portal.
    const hazardBefore = maintenanceNames();
    const { preflight: hazardPre } = await call(
      admin,
      'servers.preflight-server-action',
      { cluster: CLUSTER, node: 'cp-1', action: 'reboot' },
    );
    assert.equal(hazardPre.quorum.verdict, 'hazard', JSON.stringify(hazardPre));
    const hazard = await admin.callTool({
      name: 'servers.reboot-server',
      arguments: {
        cluster: CLUSTER,
        node: 'cp-1',
        reason: 'e2e: an agent asks a hazard reboot',
        preflightToken: hazardPre.token,
        typedName: 'cp-1',
      },
    });
    assert.equal(hazard.isError, true, JSON.stringify(hazard));
    assert.match(hazard.content[0].text, /a person must do it in the portal/);
    assert.deepEqual(maintenanceNames(), hazardBefore);

    // The viewer: a second user of the same backend.
    const viewer = await mcpClient(await tokenOf(VIEWER));
    assert.ok(
      (await viewer.listTools()).tools.some(
        t => t.name === 'servers.cordon-server',
      ),
    );
    const seen = await call(viewer, 'servers.list-servers', {
      cluster: CLUSTER,
    });
    const viewerRow = seen.servers.find(s => s.name === VIEWER_NODE);
    assert.ok(viewerRow, `${VIEWER_NODE} readable by the viewer`);
    assert.deepEqual(viewerRow.actions, {}, 'nothing the viewer may request');

    const viewerBefore = maintenanceNames();
    const pre = await viewer.callTool({
      name: 'servers.preflight-server-action',
      arguments: { cluster: CLUSTER, node: VIEWER_NODE, action: 'drain' },
    });
    assert.equal(pre.isError, true);
    assert.match(pre.content[0].text, /NotAllowedError.*servers:drain/);
    const denied = await viewer.callTool({
      name: 'servers.cordon-server',
      arguments: {
        cluster: CLUSTER,
        node: VIEWER_NODE,
        reason: 'e2e: the viewer tries to cordon through MCP',
      },
    });
    assert.equal(denied.isError, true, JSON.stringify(denied));
    assert.match(denied.content[0].text, /NotAllowedError.*servers:cordon/);
    // Nothing written.
    assert.deepEqual(maintenanceNames(), viewerBefore);
    assert.equal(unschedulable(VIEWER_NODE), '');

    // The trail: the plugin's own event of each attempt says it came through the
    // actions registry, next to the MCP plugin's tool-execution event.
    const ok = await auditEvent(
      'the admin cordon audited',
      e =>
        e.plugin === 'servers' &&
        e.eventId === 'server-action' &&
        e.meta?.actor === ADMIN &&
        e.meta?.node === ADMIN_NODE,
    );
    assert.equal(ok.status, 'succeeded');
    assert.equal(ok.severityLevel, 'medium');
    assert.equal(ok.meta.via, 'actions');
    assert.equal(ok.meta.maintenance, cordoned.maintenance);
    assert.equal(ok.meta.reason, reason);
    const no = await auditEvent(
      'the viewer cordon audited',
      e =>
        e.plugin === 'servers' &&
        e.eventId === 'server-action' &&
        e.meta?.actor === VIEWER,
    );
    assert.equal(no.status, 'failed');
    assert.equal(no.meta.via, 'actions');
    assert.equal(no.meta.outcome, 'denied');
    assert.equal(no.meta.node, VIEWER_NODE);
    await auditEvent(
      'the MCP plugin audited the failed tool call',
      e =>
        e.plugin === 'mcp-actions' &&
        e.eventId === 'tool-execution' &&
        e.meta?.toolName === 'servers.cordon-server' &&
        e.status === 'failed',
    );
  },
);
