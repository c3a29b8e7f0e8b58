// Hardware health for the rack's Redfish BMCs. sushy-tools 2.2.0's fake driver has no chassis
// parts, drives, log service or firmware inventory, so this small proxy stands in front of it:
// same TLS certificate, same Basic credentials, every request it does not answer itself is
// forwarded to sushy unchanged (power, Reset, the Systems collection).
//
//   import { startHealthProxy } from './lib/redfishHealth.mjs';
//   const h = await startHealthProxy({ upstream, username, password, certFile, keyFile, caFile, systems });
//   h.url          -> the BMC address to use (https://127.0.0.1:<port>)
//   h.controlUrl   -> control API (http on loopback, no auth, like the Talos emulator's)
//
// What it adds, per system (id = the sushy system id):
// * GET /redfish/v1/Systems/<id>: sushy's answer plus Status {State, Health, HealthRollup}
//   (the worst part), Links.Chassis, LogServices and Storage.
// * /redfish/v1/Chassis/<id> (Status), PowerSubsystem/PowerSupplies/PSU1..2,
//   ThermalSubsystem/Fans/Fan1..2, /redfish/v1/Systems/<id>/Storage/1 with Drives/Disk0..1,
//   /redfish/v1/Systems/<id>/LogServices/SEL/Entries (newest last, as BMCs list them).
// * /redfish/v1/UpdateService/FirmwareInventory/{BIOS,BMC} (one inventory for the proxy).
// * Firmware updates (lib/redfishUpdate.mjs, whose header has the details): the UpdateService
//   with SimpleUpdate (HTTPS image URIs, Immediate or OnReset) or, push-only, a multipart
//   MultipartHttpPushUri; each accepted update is a Task under /redfish/v1/TaskService with a
//   task monitor (202 while it runs, 200 when done). The version comes from the image's file
//   name (bios-2.3.1.bin -> 2.3.1). An OnReset update lands when a ComputerSystem.Reset that
//   this proxy forwards to sushy is accepted.
// * The service root gains Chassis, UpdateService and TaskService links; it does not offer
//   $expand, so a collection's members are read one by one (as on many BMCs).
//
// Control API (JSON bodies):
//   POST /health/<id>/part    {kind: PowerSupply|Fan|Drive, name, health: OK|Warning|Critical}
//   POST /health/<id>/log     {message, severity?, count?}  appends count (1) SEL entries
//   POST /health/<id>/reset   every part OK, the SEL empty
//   POST /health/firmware     {offered: false} -> FirmwareInventory answers 404 (link kept);
//                             {link: URL} -> UpdateService links FirmwareInventory there
//                             (off-origin tests); {} -> back to normal
//   POST /health/update {offered?, pushOnly?, taskMs?, failNext?}  firmware updates: no
//                             UpdateService (404), push-only, task duration, the next task
//                             fails with this message (lib/redfishUpdate.mjs)
//   GET  /health/update/requests {count, requests}  every update request received, kept
//   POST /health/update/reset  versions, tasks, requests and update switches back
//   GET  /health/requests     {count, paths}: requests served since the last GET (a read's cost)
//   POST /health/<id>/logPages {pageSize}  the SEL's Entries in pages of pageSize, oldest
//                             first, linked by Members@odata.nextLink (?$skip=N&$top=M, as
//                             OpenBMC pages), with Members@odata.count; 0: one answer
//   POST /health/<id>/logHuge  {bytes}  the SEL's Entries answer is a JSON body of about
//                             `bytes` bytes (no Content-Length), generated as it is sent,
//                             never held in memory, stopped when the client goes; 0: off
//   POST /health/<id>/slow     {bytesPerSecond}  every answer the proxy makes for the
//                             system (its chassis, parts, SEL) is sent that slowly after
//                             its headers (a BMC that dribbles); 0: off
// A system's reset also ends logPages, logHuge and slow.
// Plain ESM, no npm dependencies.

import fs from 'node:fs';
import http from 'node:http';
import https from 'node:https';
import { createUpdateService } from './redfishUpdate.mjs';

const ROOT = '/redfish/v1';
const HEALTHS = ['OK', 'Warning', 'Critical'];
const worst = list =>
  list.reduce(
    (w, h) => (HEALTHS.indexOf(h) > HEALTHS.indexOf(w) ? h : w),
    'OK',
  );

function freshState() {
  return {
    parts: {
      PowerSupply: { PSU1: 'OK', PSU2: 'OK' },
      Fan: { Fan1: 'OK', Fan2: 'OK' },
      Drive: { Disk0: 'OK', Disk1: 'OK' },
    },
    sel: [],
    nextId: 1,
    /** Control switches of the SEL's Entries answer. */
    log: { pageSize: 0, hugeBytes: 0, bytesPerSecond: 0 },
  };
}

/**
 * Streams a JSON body of about `bytes` bytes (log entries, generated as they are written)
 * with back-pressure, so a 200 MB answer never sits in the proxy's memory; it stops when
 * the client goes away.
 */
function streamHugeLog(res, path, bytes) {
  res.writeHead(200, { 'content-type': 'application/json' });
  res.write(`{"@odata.id":"${path}","Members":[`);
  let sent = 0;
  let id = 0;
  let gone = false;
  res.on('close', () => {
    gone = true;
  });
  const filler = 'x'.repeat(900);
  const more = () => {
    while (!gone && sent < bytes) {
      id++;
      const entry = `${
        id > 1 ? ',' : ''
      }{"@odata.id":"${path}/${id}","Id":"${id}","Created":"2026-01-01T00:00:00Z","Severity":"OK","Message":"${filler}"}`;
      sent += entry.length;
      if (!res.write(entry)) {
        res.once('drain', more);
        return;
      }
    }
    if (!gone) res.end(']}');
  };
  more();
}

/** Sends `text` at `bytesPerSecond` after the headers; stops when the client goes away. */
function dribble(res, text, bytesPerSecond) {
  res.writeHead(200, { 'content-type': 'application/json' });
  // Ten writes a second, or one byte every 1/bytesPerSecond seconds below ten.
  const step = Math.max(1, Math.round(bytesPerSecond / 10));
  const every = bytesPerSecond >= 10 ? 100 : 1000 / bytesPerSecond;
  let at = 0;
  const timer = setInterval(() => {
    if (at >= text.length) {
      clearInterval(timer);
      res.end();
      return;
    }
    res.write(text.slice(at, at + step));
    at += step;
  }, every);
  timer.unref?.();
  res.on('close', () => clearInterval(timer));
}

/**
 * @param {object} o
 * @param {string} o.upstream   sushy's base URL
 * @param {string} o.username
 * @param {string} o.password
 * @param {string} [o.certFile] serve HTTPS with this certificate (else http)
 * @param {string} [o.keyFile]
 * @param {string} [o.caFile]   to trust sushy's certificate
 * @param {string[]} o.systems  system ids
 */
export async function startHealthProxy({
  upstream,
  username,
  password,
  certFile,
  keyFile,
  caFile,
  systems,
}) {
  const state = new Map(systems.map(id => [id, freshState()]));
  const firmware = { offered: true, link: undefined };
  const updates = createUpdateService({ systems });
  let served = [];
  const ca = caFile ? fs.readFileSync(caFile) : undefined;
  const expectedAuth = `Basic ${Buffer.from(`${username}:${password}`).toString(
    'base64',
  )}`;

  const send = (res, status, body, headers = {}) => {
    const text = body === undefined ? '' : JSON.stringify(body);
    res.writeHead(status, {
      ...headers,
      'content-type': 'application/json',
      'content-length': Buffer.byteLength(text),
    });
    res.end(text);
  };
  const notFound = (res, p) =>
    send(res, 404, {
      error: {
        code: 'Base.1.8.ResourceMissingAtURI',
        message: `${p} not found`,
      },
    });

  const forward = (req, body) =>
    new Promise((resolve, reject) => {
      const url = new URL(req.url, upstream);
      const mod = url.protocol === 'https:' ? https : http;
      const headers = { ...req.headers, host: url.host };
      const out = mod.request(
        url,
        { method: req.method, headers, ca, timeout: 15000 },
        res => {
          const chunks = [];
          res.on('data', c => chunks.push(c));
          res.on('end', () =>
            resolve({
              status: res.statusCode,
              headers: res.headers,
              body: Buffer.concat(chunks),
            }),
          );
        },
      );
      out.on('timeout', () => out.destroy(new Error('upstream timeout')));
      out.on('error', reject);
      if (body.length) out.write(body);
      out.end();
    });

  const member = id => ({ '@odata.id': id });
  const status = health => ({
    State: 'Enabled',
    Health: health,
  });
  const rollupOf = s =>
    worst(Object.values(s.parts).flatMap(kind => Object.values(kind)));

  /** The synthetic resource at path p (with its query), or undefined. */
  function synthetic(p, query) {
    if (p === `${ROOT}/UpdateService`) {
      // lib/redfishUpdate.mjs: SimpleUpdate or the multipart push, or none (404).
      const service = updates.get(p)?.body;
      if (!service) return undefined;
      return {
        ...service,
        FirmwareInventory: member(
          firmware.link ?? `${ROOT}/UpdateService/FirmwareInventory`,
        ),
      };
    }
    if (p.startsWith(`${ROOT}/UpdateService/FirmwareInventory`)) {
      if (!firmware.offered) return undefined;
      return updates.inventory(p);
    }
    if (p === `${ROOT}/Chassis`) {
      return {
        '@odata.id': p,
        Name: 'Chassis Collection',
        Members: systems.map(id => member(`${p}/${id}`)),
      };
    }
    let m = p.match(/^\/redfish\/v1\/Chassis\/([^/]+)(\/.*)?$/);
    if (m && state.has(m[1])) {
      const [, id, rest = ''] = m;
      const s = state.get(id);
      const base = `${ROOT}/Chassis/${id}`;
      if (rest === '') {
        const health = worst([
          ...Object.values(s.parts.PowerSupply),
          ...Object.values(s.parts.Fan),
        ]);
        return {
          '@odata.id': p,
          Id: id,
          Name: `Chassis ${id}`,
          Status: { ...status('OK'), HealthRollup: health },
          PowerSubsystem: member(`${base}/PowerSubsystem`),
          ThermalSubsystem: member(`${base}/ThermalSubsystem`),
        };
      }
      if (rest === '/PowerSubsystem')
        return {
          '@odata.id': p,
          Name: 'Power Subsystem',
          PowerSupplies: member(`${p}/PowerSupplies`),
        };
      if (rest === '/ThermalSubsystem')
        return {
          '@odata.id': p,
          Name: 'Thermal Subsystem',
          Fans: member(`${p}/Fans`),
        };
      const lists = {
        '/PowerSubsystem/PowerSupplies': 'PowerSupply',
        '/ThermalSubsystem/Fans': 'Fan',
      };
      for (const [suffix, kind] of Object.entries(lists)) {
        if (rest === suffix)
          return {
            '@odata.id': p,
            Members: Object.keys(s.parts[kind]).map(n => member(`${p}/${n}`)),
          };
        if (rest.startsWith(`${suffix}/`)) {
          const name = rest.slice(suffix.length + 1);
          const health = s.parts[kind][name];
          if (!health) return undefined;
          return {
            '@odata.id': p,
            Id: name,
            Name: name,
            Status: status(health),
          };
        }
      }
      return undefined;
    }
    m = p.match(
      /^\/redfish\/v1\/Systems\/([^/]+)\/(Storage|LogServices)(\/.*)?$/,
    );
    if (m && state.has(m[1])) {
      const [, id, what, rest = ''] = m;
      const s = state.get(id);
      const base = `${ROOT}/Systems/${id}/${what}`;
      if (what === 'Storage') {
        if (rest === '')
          return { '@odata.id': p, Members: [member(`${base}/1`)] };
        if (rest === '/1')
          return {
            '@odata.id': p,
            Id: '1',
            Name: 'Storage Controller',
            Status: {
              ...status('OK'),
              HealthRollup: worst(Object.values(s.parts.Drive)),
            },
            Drives: Object.keys(s.parts.Drive).map(n =>
              member(`${base}/1/Drives/${n}`),
            ),
          };
        const d = rest.match(/^\/1\/Drives\/([^/]+)$/);
        const health = d && s.parts.Drive[d[1]];
        if (!health) return undefined;
        return { '@odata.id': p, Id: d[1], Name: d[1], Status: status(health) };
      }
      if (rest === '')
        return { '@odata.id': p, Members: [member(`${base}/SEL`)] };
      if (rest === '/SEL')
        return {
          '@odata.id': p,
          Id: 'SEL',
          Entries: member(`${base}/SEL/Entries`),
        };
      if (rest === '/SEL/Entries') {
        const size = s.log.pageSize;
        if (!size) {
          return {
            '@odata.id': p,
            'Members@odata.count': s.sel.length,
            Members: s.sel,
          };
        }
        const skip = Math.max(0, Number(query?.get('$skip') ?? 0) || 0);
        const top = Math.min(
          size,
          Math.max(1, Number(query?.get('$top') ?? size) || size),
        );
        return {
          '@odata.id': p,
          'Members@odata.count': s.sel.length,
          Members: s.sel.slice(skip, skip + top),
          ...(skip + top < s.sel.length
            ? {
                'Members@odata.nextLink': `${p}?$skip=${
                  skip + top
                }&$top=${top}`,
              }
            : {}),
        };
      }
      return undefined;
    }
    return undefined;
  }

  async function handle(req, res) {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    const body = Buffer.concat(chunks);
    const url = new URL(req.url, 'http://bmc');
    const p = url.pathname.replace(/\/+$/, '') || '/';
    served.push(`${req.method} ${p}`);
    if (req.method === 'GET' && p !== ROOT && p.startsWith(`${ROOT}/`)) {
      if (req.headers.authorization !== expectedAuth) {
        send(res, 401, {
          error: {
            code: 'Base.1.8.NoValidSession',
            message: 'authentication required',
          },
        });
        return;
      }
      const log = p.match(
        /^\/redfish\/v1\/Systems\/([^/]+)\/LogServices\/SEL\/Entries$/,
      );
      const logState = log && state.get(log[1])?.log;
      if (logState?.hugeBytes) {
        streamHugeLog(res, p, logState.hugeBytes);
        return;
      }
      // Tasks and their monitors (lib/redfishUpdate.mjs) carry their own status and headers.
      if (p.startsWith(`${ROOT}/TaskService`)) {
        const task = updates.get(p);
        if (task) send(res, task.status, task.body, task.headers);
        else notFound(res, p);
        return;
      }
      const own = synthetic(p, url.searchParams);
      // Slow: every answer the proxy makes for the system (its chassis, parts, log).
      const owner = p.match(/^\/redfish\/v1\/(?:Chassis|Systems)\/([^/]+)/);
      const slow = owner && state.get(owner[1])?.log.bytesPerSecond;
      if (own && slow) {
        dribble(res, JSON.stringify(own), slow);
        return;
      }
      if (own) {
        send(res, 200, own);
        return;
      }
      if (/^\/redfish\/v1\/(Chassis|UpdateService)(\/|$)/.test(p)) {
        notFound(res, p);
        return;
      }
    }
    if (req.method === 'POST' && p.startsWith(`${ROOT}/UpdateService/`)) {
      if (req.headers.authorization !== expectedAuth) {
        send(res, 401, {
          error: {
            code: 'Base.1.8.NoValidSession',
            message: 'authentication required',
          },
        });
        return;
      }
      const update = updates.post(p, req.headers['content-type'], body);
      if (update) {
        send(res, update.status, update.body, update.headers);
        return;
      }
    }
    const answer = await forward(req, body);
    // A Reset sushy accepted applies the OnReset firmware updates waiting for it.
    const reset = p.match(
      /^\/redfish\/v1\/Systems\/([^/]+)\/Actions\/ComputerSystem\.Reset$/,
    );
    if (
      req.method === 'POST' &&
      reset &&
      answer.status >= 200 &&
      answer.status < 300
    )
      updates.afterReset(reset[1]);
    const system = p.match(/^\/redfish\/v1\/Systems\/([^/]+)$/);
    const augment =
      req.method === 'GET' &&
      answer.status === 200 &&
      (p === ROOT || (system && state.has(system[1])));
    if (!augment) {
      const headers = { ...answer.headers };
      delete headers['transfer-encoding'];
      res.writeHead(answer.status, headers);
      res.end(answer.body);
      return;
    }
    const json = JSON.parse(answer.body.toString('utf8'));
    if (p === ROOT) {
      json.Chassis = member(`${ROOT}/Chassis`);
      delete json.UpdateService;
      Object.assign(json, updates.serviceRootLinks());
    } else {
      const id = system[1];
      const rollup = rollupOf(state.get(id));
      json.Status = { State: 'Enabled', Health: 'OK', HealthRollup: rollup };
      json.Links = {
        ...(json.Links || {}),
        Chassis: [member(`${ROOT}/Chassis/${id}`)],
      };
      json.LogServices = member(`${p}/LogServices`);
      json.Storage = member(`${p}/Storage`);
    }
    send(res, 200, json);
  }

  const handler = (req, res) =>
    handle(req, res).catch(e => {
      if (!res.headersSent)
        send(res, 502, { error: { message: String(e.message) } });
      else res.destroy();
    });
  const server = certFile
    ? https.createServer(
        { cert: fs.readFileSync(certFile), key: fs.readFileSync(keyFile) },
        handler,
      )
    : http.createServer(handler);
  await new Promise(r => server.listen(0, '127.0.0.1', r));
  const url = `${certFile ? 'https' : 'http'}://127.0.0.1:${
    server.address().port
  }`;

  const control = http.createServer(async (req, res) => {
    const chunks = [];
    for await (const c of req) chunks.push(c);
    let body = {};
    try {
      body = chunks.length ? JSON.parse(Buffer.concat(chunks).toString()) : {};
    } catch {
      send(res, 400, { error: 'body is not JSON' });
      return;
    }
    const p = new URL(req.url, 'http://control').pathname;
    const update = updates.control(req.method, p, body);
    if (update) {
      send(res, update.status, update.body);
      return;
    }
    if (req.method === 'GET' && p === '/health/requests') {
      send(res, 200, { count: served.length, paths: served });
      served = [];
      return;
    }
    if (req.method === 'POST' && p === '/health/firmware') {
      firmware.offered = body.offered !== false;
      firmware.link = typeof body.link === 'string' ? body.link : undefined;
      send(res, 200, firmware);
      return;
    }
    const m = p.match(
      /^\/health\/([^/]+)\/(part|log|reset|logPages|logHuge|slow)$/,
    );
    const s = m && state.get(m[1]);
    if (req.method !== 'POST' || !s) {
      send(res, 404, { error: `no ${req.method} ${p}` });
      return;
    }
    if (m[2] === 'reset') {
      state.set(m[1], freshState());
      send(res, 200, {});
      return;
    }
    const switches = {
      logPages: [
        'pageSize',
        'pageSize (0: one answer, else 1 to 10000)',
        10000,
      ],
      logHuge: ['hugeBytes', 'bytes (0: off, else up to 2^31)', 2 ** 31],
      slow: ['bytesPerSecond', 'bytesPerSecond (0: off, else 1 to 1e6)', 1e6],
    };
    if (m[2] in switches) {
      const [field, words, max] = switches[m[2]];
      const given =
        m[2] === 'logPages'
          ? body.pageSize
          : m[2] === 'logHuge'
          ? body.bytes
          : body.bytesPerSecond;
      if (!Number.isInteger(given) || given < 0 || given > max) {
        send(res, 400, { error: `${words} please` });
        return;
      }
      s.log[field] = given;
      send(res, 200, s.log);
      return;
    }
    if (m[2] === 'part') {
      const kind = s.parts[body.kind];
      if (!kind || !(body.name in kind) || !HEALTHS.includes(body.health)) {
        send(res, 400, {
          error: `kind (PowerSupply, Fan, Drive), name (${Object.entries(
            s.parts,
          )
            .map(([k, v]) => `${k}: ${Object.keys(v).join(', ')}`)
            .join('; ')}) and health (OK, Warning, Critical) please`,
        });
        return;
      }
      kind[body.name] = body.health;
      send(res, 200, s.parts);
      return;
    }
    const count =
      Number.isInteger(body.count) && body.count > 0 ? body.count : 1;
    if (typeof body.message !== 'string' || count > 100000) {
      send(res, 400, {
        error: 'message (a string) and count (1 to 100000) please',
      });
      return;
    }
    const created = [];
    for (let i = 0; i < count; i++) {
      const id = String(s.nextId++);
      const entry = {
        '@odata.id': `${ROOT}/Systems/${m[1]}/LogServices/SEL/Entries/${id}`,
        Id: id,
        Name: `Log Entry ${id}`,
        EntryType: 'SEL',
        Severity: HEALTHS.includes(body.severity) ? body.severity : 'Warning',
        Created: new Date().toISOString(),
        Message: body.message,
      };
      s.sel.push(entry);
      created.push(id);
    }
    send(res, 200, { created: created.slice(-20), total: s.sel.length });
  });
  await new Promise(r => control.listen(0, '127.0.0.1', r));
  const controlUrl = `http://127.0.0.1:${control.address().port}`;

  return {
    url,
    controlUrl,
    async stop() {
      updates.stop();
      server.closeAllConnections?.();
      control.closeAllConnections?.();
      await Promise.all([
        new Promise(r => server.close(() => r())),
        new Promise(r => control.close(() => r())),
      ]);
    },
  };
}
