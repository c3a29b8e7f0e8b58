// The rack's Alertmanager: the real one (scripts/alertmanager.sh builds it from the Go module
// proxy), on 127.0.0.1:<free port>, API v2 only, no cluster peers.
//
//   import { startAlertmanager } from './lib/alertmanager.mjs';
//   const a = await startAlertmanager({ dir, bin, log });
//   a.url                       -> 'http://127.0.0.1:PORT'
//   await a.postAlerts([{ labels: { alertname, node, severity } }])   (stands in for Prometheus)
//   await a.resolveAlerts([...])   posts the same alerts with endsAt now: resolved
//   await a.down(); await a.up()   stop and start it again on the same port and storage
//
// Its configuration (DIR/alertmanager/alertmanager.yml) sends every notification to a
// receiver that has no integrations, and has one inhibition rule: a critical alert of a node
// inhibits its warnings. Silences are kept in DIR/alertmanager/data across down/up.
// Plain ESM, no npm dependencies.

import fs from 'node:fs';
import { freePort } from './net.mjs';
import path from 'node:path';
import { spawnRecorded } from './talos.mjs';

const sleep = ms => new Promise(r => setTimeout(r, ms));

const CONFIG = `# Written by e2e/rack/lib/alertmanager.mjs.
route:
  receiver: nowhere
  group_by: [alertname, node]
  group_wait: 1s
  group_interval: 5s
  repeat_interval: 1h
receivers:
  - name: nowhere
inhibit_rules:
  - source_matchers: [severity="critical"]
    target_matchers: [severity="warning"]
    equal: [node]
`;

async function ready(url, entry, timeoutMs = 30000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (entry.exited) {
      throw new Error(
        `alertmanager exited (${JSON.stringify(entry.exited)}); see ${
          entry.logFile
        }`,
      );
    }
    try {
      const r = await fetch(`${url}/-/ready`);
      if (r.ok) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      throw new Error(`alertmanager not ready at ${url} after ${timeoutMs} ms`);
    }
    await sleep(200);
  }
}

/** Starts the rack's Alertmanager; see the header for what it returns. */
export async function startAlertmanager({ dir, bin, log = () => {} }) {
  if (!fs.existsSync(bin)) {
    throw new Error(
      `alertmanager missing at ${bin} (run e2e/rack/build.sh or scripts/alertmanager.sh)`,
    );
  }
  const home = path.join(dir, 'alertmanager');
  fs.mkdirSync(path.join(home, 'data'), { recursive: true });
  const configFile = path.join(home, 'alertmanager.yml');
  fs.writeFileSync(configFile, CONFIG);
  const port = await freePort();
  const url = `http://127.0.0.1:${port}`;
  const args = [
    `--config.file=${configFile}`,
    `--storage.path=${path.join(home, 'data')}`,
    `--web.listen-address=127.0.0.1:${port}`,
    '--cluster.listen-address=',
    '--log.level=warn',
  ];
  let entry = null;

  async function up() {
    if (entry) return;
    entry = spawnRecorded(dir, 'alertmanager', bin, args);
    await ready(url, entry);
  }
  async function down() {
    if (entry && !entry.exited) await entry.stop();
    entry = null;
  }
  async function post(alerts) {
    const r = await fetch(`${url}/api/v2/alerts`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(alerts),
    });
    if (!r.ok) {
      throw new Error(
        `alertmanager POST /api/v2/alerts: ${r.status} ${await r.text()}`,
      );
    }
  }

  await up();
  log(`alertmanager listening on ${url}`);
  return {
    url,
    configFile,
    up,
    down,
    /** Alerts as Prometheus sends them: firing until resolved (or 5 min without a resend). */
    postAlerts: alerts => post(alerts),
    /** The same alerts, resolved now. */
    resolveAlerts: alerts =>
      post(alerts.map(a => ({ ...a, endsAt: new Date().toISOString() }))),
    stop: down,
  };
}
