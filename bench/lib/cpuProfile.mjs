// Summarises a V8 .cpuprofile (what `node --cpu-prof` writes): self time and total time
// by function, largest first, so a latency figure can be explained.
//
//   node bench/lib/cpuProfile.mjs FILE [TOP] [FILTER]   # FILTER: only frames whose url contains it
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export function summariseCpuProfile(file, { top = 20, filter } = {}) {
  const profile = JSON.parse(fs.readFileSync(file, 'utf8'));
  const byId = new Map(profile.nodes.map(n => [n.id, n]));
  const parent = new Map();
  for (const n of profile.nodes)
    for (const c of n.children ?? []) parent.set(c, n.id);
  // Sample counts per node, then the time each sample stood for.
  const hits = new Map();
  profile.samples.forEach((id, i) => {
    const dt = profile.timeDeltas[i] ?? 0;
    hits.set(id, (hits.get(id) ?? 0) + dt);
  });
  const label = n => {
    const f = n.callFrame;
    const where = f.url ? `${path.basename(f.url)}:${f.lineNumber + 1}` : '';
    return `${f.functionName || '(anonymous)'} ${where}`.trim();
  };
  const self = new Map();
  const total = new Map();
  let all = 0;
  for (const [id, us] of hits) {
    all += us;
    const n = byId.get(id);
    self.set(label(n), (self.get(label(n)) ?? 0) + us);
    // Total: once per distinct function on the stack.
    const seen = new Set();
    for (let cur = id; cur !== undefined; cur = parent.get(cur)) {
      const node = byId.get(cur);
      if (filter && !node.callFrame.url.includes(filter)) continue;
      const key = label(node);
      if (seen.has(key)) continue;
      seen.add(key);
      total.set(key, (total.get(key) ?? 0) + us);
    }
  }
  const sort = m => [...m].sort((a, b) => b[1] - a[1]).slice(0, top);
  return { allMs: all / 1000, self: sort(self), total: sort(total) };
}

export function formatCpuSummary({ allMs, self, total }) {
  const row = ([k, us]) =>
    `${(us / 1000).toFixed(0).padStart(7)} ms ${((us / 1000 / allMs) * 100)
      .toFixed(1)
      .padStart(5)}%  ${k}`;
  return [
    `sampled ${allMs.toFixed(0)} ms`,
    'self time:',
    ...self.map(row),
    'total time (function on the stack):',
    ...total.map(row),
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, top, filter] = process.argv.slice(2);
  if (!file) {
    process.stderr.write(
      'usage: node bench/lib/cpuProfile.mjs FILE [TOP] [FILTER]\n',
    );
    process.exit(2);
  }
  process.stdout.write(
    `${formatCpuSummary(
      summariseCpuProfile(file, { top: Number(top ?? 20), filter }),
    )}\n`,
  );
}
