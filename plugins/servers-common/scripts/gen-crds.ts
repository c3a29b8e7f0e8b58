/*
 * Writes crds/*.yaml from the zod schemas in src/resources, and removes generated CRD
 * files of kinds that no longer exist. Run: yarn workspace @rackside/plugin-servers-common gen:crds
 */
import fs from 'node:fs';
import path from 'node:path';
import { CRDS_DIR, renderCrdFiles } from './crdFiles';

const files = renderCrdFiles();
fs.mkdirSync(CRDS_DIR, { recursive: true });
for (const existing of fs.readdirSync(CRDS_DIR)) {
  if (existing.startsWith('rackside.dev_') && !files.has(existing)) {
    fs.rmSync(path.join(CRDS_DIR, existing));
    process.stdout.write(`removed crds/${existing}\n`);
  }
}
for (const [name, content] of files) {
  const file = path.join(CRDS_DIR, name);
  const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
  if (before !== content) {
    fs.writeFileSync(file, content);
    process.stdout.write(`wrote crds/${name}\n`);
  }
}
process.stdout.write(`${files.size} CRDs in crds/ are up to date\n`);
