// Gives everything Rackside releases one version (scripts/release.sh runs it first):
//   1. `changeset version`: consumes .changeset/*.md, bumps the fixed group of
//      .changeset/config.json (the six published plugins and the private operator, whose
//      version the image is tagged with) to one version, writes each CHANGELOG.md;
//   2. checks that every package of the group now carries that one version;
//   3. writes it as the chart's `version` and `appVersion` (charts/rackside/Chart.yaml);
//   4. formats what changesets wrote with the repository's prettier.
// With no pending changeset it only checks and syncs the chart. Prints the version last.
//
//   node scripts/release/version.mjs [--root DIR]   DIR: a copy of the repository to version
//                                                   (the release test's); the tools are the
//                                                   repository's own (its node_modules)
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

const REPO_ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
const require = createRequire(path.join(REPO_ROOT, 'package.json'));
const log = msg => process.stderr.write(`release: ${msg}\n`);

const readJson = file => JSON.parse(fs.readFileSync(file, 'utf8'));

/** The workspaces of `root`: {dir, manifest} of packages/* and plugins/*. */
export function workspaces(root) {
  return ['packages', 'plugins'].flatMap(parent =>
    fs
      .readdirSync(path.join(root, parent))
      .map(d => path.join(root, parent, d))
      .filter(dir => fs.existsSync(path.join(dir, 'package.json')))
      .map(dir => ({
        dir,
        manifest: readJson(path.join(dir, 'package.json')),
      })),
  );
}

/** The packages of the fixed group (.changeset/config.json), which release together. */
export function fixedGroup(root) {
  const config = readJson(path.join(root, '.changeset/config.json'));
  if (config.fixed?.length !== 1)
    throw new Error('.changeset/config.json: expected exactly one fixed group');
  const names = new Set(config.fixed[0]);
  const members = workspaces(root).filter(w => names.has(w.manifest.name));
  const missing = [...names].filter(
    n => !members.some(m => m.manifest.name === n),
  );
  if (missing.length)
    throw new Error(`fixed group names no workspace: ${missing.join(', ')}`);
  return members;
}

/** The group's one version; throws when its packages disagree. */
export function groupVersion(root) {
  const versions = new Map(
    fixedGroup(root).map(m => [m.manifest.name, m.manifest.version]),
  );
  const distinct = new Set(versions.values());
  if (distinct.size !== 1)
    throw new Error(
      `the fixed group has more than one version: ${[...versions]
        .map(([n, v]) => `${n}@${v}`)
        .join(', ')}`,
    );
  return [...distinct][0];
}

/** Chart.yaml's text with `version` and `appVersion` set to `version`. */
export function chartYamlWithVersion(text, version) {
  const set = (s, key, value) => {
    const re = new RegExp(`^${key}:.*$`, 'm');
    if (!re.test(s)) throw new Error(`Chart.yaml has no ${key}:`);
    return s.replace(re, `${key}: ${value}`);
  };
  return set(set(text, 'version', version), 'appVersion', `'${version}'`);
}

function pendingChangesets(root) {
  return fs
    .readdirSync(path.join(root, '.changeset'))
    .filter(f => f.endsWith('.md') && f !== 'README.md');
}

export function versionRelease(root = REPO_ROOT) {
  if (pendingChangesets(root).length) {
    log(
      `versioning from ${
        pendingChangesets(root).length
      } changesets (changeset version)`,
    );
    const before = new Map(
      workspaces(root).map(w => [w.dir, w.manifest.version]),
    );
    const cli = path.join(
      path.dirname(require.resolve('@changesets/cli/package.json')),
      'bin.js',
    );
    execFileSync(process.execPath, [cli, 'version'], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
    });
    const left = pendingChangesets(root);
    if (left.length)
      throw new Error(`changesets not consumed: ${left.join(', ')}`);
    // What changesets rewrote, formatted as the repository formats it (prettier 2 from
    // the repository root's node_modules; it resolves the config from there).
    const touched = workspaces(root)
      .filter(w => w.manifest.version !== before.get(w.dir))
      .flatMap(w => [
        path.join(w.dir, 'package.json'),
        path.join(w.dir, 'CHANGELOG.md'),
      ])
      .filter(f => fs.existsSync(f));
    if (touched.length) {
      const prettier = path.join(
        path.dirname(require.resolve('prettier/package.json')),
        'bin-prettier.js',
      );
      execFileSync(
        process.execPath,
        [prettier, '--loglevel', 'warn', '--write', ...touched],
        { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
      );
    }
  } else {
    log('no pending changesets: the versions stay as they are');
  }
  const version = groupVersion(root);
  const chart = path.join(root, 'charts/rackside/Chart.yaml');
  const text = fs.readFileSync(chart, 'utf8');
  const synced = chartYamlWithVersion(text, version);
  if (synced !== text) {
    fs.writeFileSync(chart, synced);
    log(`charts/rackside/Chart.yaml: version and appVersion ${version}`);
  }
  return version;
}

if (
  process.argv[1] &&
  fileURLToPath(import.meta.url) === path.resolve(process.argv[1])
) {
  const i = process.argv.indexOf('--root');
  const root = i > 0 ? path.resolve(process.argv[i + 1]) : REPO_ROOT;
  try {
    console.log(versionRelease(root));
  } catch (error) {
    log(error.message);
    process.exit(1);
  }
}
