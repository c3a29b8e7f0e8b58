// Summarises a V8 .heapsnapshot (what `--heapsnapshot-signal` writes): the live heap by
// node type and constructor, largest first, so a memory figure can be explained.
//
//   node bench/lib/heapSummary.mjs FILE [TOP]
import fs from 'node:fs';
import { fileURLToPath } from 'node:url';

export function summariseHeap(file, top = 25) {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8'));
  const { node_fields: fields, node_types: types } = snap.snapshot.meta;
  const width = fields.length;
  const typeIdx = fields.indexOf('type');
  const nameIdx = fields.indexOf('name');
  const sizeIdx = fields.indexOf('self_size');
  const typeNames = types[0];
  const byKey = new Map();
  let total = 0;
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = typeNames[snap.nodes[i + typeIdx]];
    const size = snap.nodes[i + sizeIdx];
    total += size;
    // Objects by constructor; strings, code, arrays and the rest by their type.
    const key =
      type === 'object' || type === 'native' || type === 'closure'
        ? `${type} ${snap.strings[snap.nodes[i + nameIdx]]}`.slice(0, 80)
        : type;
    const entry = byKey.get(key) ?? { key, size: 0, count: 0 };
    entry.size += size;
    entry.count++;
    byKey.set(key, entry);
  }
  const rows = [...byKey.values()]
    .sort((a, b) => b.size - a.size)
    .slice(0, top);
  return { total, rows };
}

export function formatHeapSummary({ total, rows }) {
  const mb = n => (n / 1e6).toFixed(1).padStart(7);
  return [
    `live heap ${mb(total)} MB`,
    ...rows.map(
      r => `${mb(r.size)} MB  ${String(r.count).padStart(8)}  ${r.key}`,
    ),
  ].join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const [file, top] = process.argv.slice(2);
  if (!file) {
    process.stderr.write('usage: node bench/lib/heapSummary.mjs FILE [TOP]\n');
    process.exit(2);
  }
  process.stdout.write(
    `${formatHeapSummary(summariseHeap(file, Number(top ?? 25)))}\n`,
  );
}
