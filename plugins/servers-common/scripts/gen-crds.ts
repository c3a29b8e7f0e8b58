/*
 * Writes crds/*.yaml and the Helm chart's copy (charts/rackside/crds) from the zod schemas
 * in src/resources, and removes generated CRD files of kinds that no longer exist.
 * Run: yarn workspace @rackside/plugin-servers-common gen:crds
 */
import fs from 'node:fs';
import path from 'node:path';
import { CRD_DIRS, renderCrdFiles } from './crdFiles';

const files = renderCrdFiles();
const root = path.resolve(__dirname, '..', '..', '..');
for (const dir of CRD_DIRS) {
  const shown = path.relative(root, dir);
  fs.mkdirSync(dir, { recursive: true });
  for (const existing of fs.readdirSync(dir)) {
    if (existing.startsWith('rackside.dev_') && !files.has(existing)) {
      fs.rmSync(path.join(dir, existing));
      process.stdout.write(`removed ${shown}/${existing}\n`);
    }
  }
  for (const [name, content] of files) {
    const file = path.join(dir, name);
    const before = fs.existsSync(file) ? fs.readFileSync(file, 'utf8') : '';
    if (before !== content) {
      fs.writeFileSync(file, content);
      process.stdout.write(`wrote ${shown}/${name}\n`);
    }
  }
  process.stdout.write(`${files.size} CRDs in ${shown}/ are up to date\n`);
}
