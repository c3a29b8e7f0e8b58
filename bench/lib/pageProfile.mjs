// Summarises a page's CPU profile (what `--page-profile` of servers-list.mjs writes):
// each sample's innermost frame is mapped through the app bundle's source maps
// (packages/app/dist/static/*.map) to its source file, and the time is totalled by
// package (`@mui/material`, `@rackside/plugin-servers`, ...) and by source file,
// over the whole visit and over time slices, so the part of a first load that is
// ours can be told from Backstage's and the browser's.
//
//   node bench/lib/pageProfile.mjs FILE [DIST] [--slices MS]
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/** The package a source path belongs to: `@scope/name`, `name`, or the workspace dir. */
export function packageOf(source) {
  const nm = source.lastIndexOf('node_modules/');
  if (nm >= 0) {
    const parts = source.slice(nm + 'node_modules/'.length).split('/');
    return parts[0].startsWith('@') ? `${parts[0]}/${parts[1]}` : parts[0];
  }
  const ws = source.match(/(plugins|packages)\/([^/]+)\//);
  return ws ? `${ws[1]}/${ws[2]}` : source;
}

function mapper(dist) {
  let SourceMapConsumer;
  try {
    ({ SourceMapConsumer } = require('source-map'));
  } catch {
    return () => undefined;
  }
  const consumers = new Map();
  return (url, line, column) => {
    const file = path.basename(new URL(url, 'http://x').pathname);
    if (!consumers.has(file)) {
      const map = path.join(dist, 'static', `${file}.map`);
      consumers.set(
        file,
        fs.existsSync(map)
          ? new SourceMapConsumer(JSON.parse(fs.readFileSync(map, 'utf8')))
          : undefined,
      );
    }
    const consumer = consumers.get(file);
    if (!consumer) return undefined;
    const pos = consumer.originalPositionFor({ line: line + 1, column });
    return pos.source ?? undefined;
  };
}

export function summarisePageProfile(file, { dist, sliceMs = 0, top = 25 }) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map(n => [n.id, n]));
  const map = mapper(dist);
  const cache = new Map();
  const where = node => {
    if (cache.has(node.id)) return cache.get(node.id);
    const f = node.callFrame;
    let label;
    if (!f.url) label = { pkg: f.functionName || '(native)', source: '' };
    else {
      const source = map(f.url, f.lineNumber, f.columnNumber);
      label = source
        ? { pkg: packageOf(source), source }
        : { pkg: path.basename(f.url), source: f.url };
    }
    cache.set(node.id, label);
    return label;
  };
  const byPkg = new Map();
  const bySource = new Map();
  const slices = new Map();
  let t = profile.startTime;
  let all = 0;
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    t += dt;
    const { pkg, source } = where(byId.get(id));
    if (pkg === '(idle)') return;
    all += dt;
    byPkg.set(pkg, (byPkg.get(pkg) ?? 0) + dt);
    if (source) bySource.set(source, (bySource.get(source) ?? 0) + dt);
    if (sliceMs > 0) {
      const k = Math.floor((t - profile.startTime) / 1000 / sliceMs);
      const s = slices.get(k) ?? new Map();
      s.set(pkg, (s.get(pkg) ?? 0) + dt);
      slices.set(k, s);
    }
  });
  const sort = m => [...m].sort((a, b) => b[1] - a[1]);
  return {
    busyMs: all / 1000,
    spanMs: (profile.endTime - profile.startTime) / 1000,
    byPkg: sort(byPkg).slice(0, top),
    bySource: sort(bySource).slice(0, top),
    slices: [...slices]
      .sort((a, b) => a[0] - b[0])
      .map(([k, m]) => ({ fromMs: k * sliceMs, top: sort(m).slice(0, 4) })),
  };
}

export function formatPageSummary({ busyMs, spanMs, byPkg, bySource, slices }) {
  const row = ([k, us]) =>
    `${(us / 1000).toFixed(0).padStart(7)} ms ${((us / 1000 / busyMs) * 100)
      .toFixed(1)
      .padStart(5)}%  ${k}`;
  const out = [
    `busy ${busyMs.toFixed(0)} ms of ${spanMs.toFixed(0)} ms (not idle)`,
    'by package (innermost frame):',
    ...byPkg.map(row),
    'by source file:',
    ...bySource.map(row),
  ];
  if (slices.length) {
    out.push('by time slice:');
    for (const s of slices)
      out.push(
        `  ${String(s.fromMs).padStart(5)} ms: ${s.top
          .map(([k, us]) => `${k} ${(us / 1000).toFixed(0)}`)
          .join(', ')}`,
      );
  }
  return out.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const args = process.argv.slice(2);
  const i = args.indexOf('--slices');
  const sliceMs = i >= 0 ? Number(args.splice(i, 2)[1]) : 0;
  const [file, dist = 'packages/app/dist'] = args;
  if (!file) {
    process.stderr.write(
      'usage: node bench/lib/pageProfile.mjs FILE [DIST] [--slices MS]\n',
    );
    process.exit(2);
  }
  process.stdout.write(
    `${formatPageSummary(summarisePageProfile(file, { dist, sliceMs }))}\n`,
  );
}
