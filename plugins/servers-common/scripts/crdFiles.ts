/*
 * Renders crds/*.yaml from the zod schemas in src/resources. Used by gen-crds.ts (which
 * writes the files) and by src/resources/crds.test.ts (which fails when they differ).
 */
import path from 'node:path';
import { stringify } from 'yaml';
import { racksideCustomResourceDefinitions } from '../src/resources';

/** The part of prettier 2's API used here (the package ships no types). */
interface Prettier {
  format(source: string, options: Record<string, unknown>): string;
  resolveConfig: {
    sync(file: string): Record<string, unknown> | null;
  };
}
// eslint-disable-next-line @typescript-eslint/no-require-imports
const prettier: Prettier = require('prettier');

/** The repository's `crds/` directory. */
export const CRDS_DIR = path.resolve(__dirname, '..', '..', '..', 'crds');

/** The Helm chart's copy (Helm installs the CRDs of its own `crds/` folder). */
export const CHART_CRDS_DIR = path.resolve(
  __dirname,
  '..',
  '..',
  '..',
  'charts',
  'rackside',
  'crds',
);

/** Every directory that holds the generated files, byte for byte the same. */
export const CRD_DIRS = [CRDS_DIR, CHART_CRDS_DIR];

/** The command that regenerates the files. */
export const GEN_COMMAND =
  'yarn workspace @rackside/plugin-servers-common gen:crds';

const HEADER = [
  '# Generated from plugins/servers-common/src/resources (the zod schemas are the source).',
  `# Do not edit: change the schemas, then run \`${GEN_COMMAND}\`.`,
].join('\n');

/** One file per CRD: `crds/<group>_<plural>.yaml` -> content. */
export function renderCrdFiles(): Map<string, string> {
  const files = new Map<string, string>();
  for (const crd of racksideCustomResourceDefinitions()) {
    const name = `${crd.spec.group}_${crd.spec.names.plural}.yaml`;
    const file = path.join(CRDS_DIR, name);
    // YAML 1.1 rules for quoting: kubectl reads CRDs as YAML 1.1, where a bare
    // `on`, `off`, `yes`, `no`, `y` or `n` is a boolean (a required field named
    // `on` was written bare and the apiserver refused the CRD).
    const text = `${HEADER}\n${stringify(crd, {
      lineWidth: 0,
      version: '1.1',
    })}`;
    const options = prettier.resolveConfig.sync(file) ?? {};
    files.set(name, prettier.format(text, { ...options, filepath: file }));
  }
  return files;
}
