// One version for everything released: the versioning step of scripts/release.sh
// (scripts/release/version.mjs: `changeset version` on the fixed group, then the chart) run
// on a temporary copy of the repository (its manifests, changesets, changelogs, chart and
// the image script; the real tree's versions are never bumped here), with one extra
// changeset that bumps only servers-node. Every released package.json, the chart's version
// and appVersion, the image's tag and the tarballs' names must then carry one version,
// every changeset must be consumed (the operator's too), and changesets must say nothing
// on stderr but its banner (the demo's `link:` dependency once made it warn).
//   node --test e2e/release/version.test.mjs   (a few seconds; needs helm from e2e/rack/build.sh)
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { helmBinary } from '../../scripts/release/publish.mjs';

const ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
const readJson = file => JSON.parse(fs.readFileSync(file, 'utf8'));

/** What the versioning reads and writes, and what names the artifacts. */
const COPIED = [
  'package.json',
  'yarn.lock',
  '.yarnrc.yml',
  '.prettierignore',
  'LICENSE',
  '.changeset',
  'packages/*/package.json',
  'packages/*/CHANGELOG.md',
  'plugins/*/package.json',
  'plugins/*/CHANGELOG.md',
  'charts/rackside',
  'scripts/image.sh',
  'scripts/toolchain.sh',
];

let copy;
let before_; // name -> version in the real tree
let pending; // the real tree's pending changesets: {file, packages}
let run; // the versioning's {status, stdout, stderr}

/** The packages a changeset file names (its front matter). */
function changesetPackages(text) {
  const front = /^---\n([\s\S]*?)\n---/.exec(text)?.[1] ?? '';
  return [
    ...front.matchAll(/^['"]?([^'":]+)['"]?:\s*(patch|minor|major)/gm),
  ].map(m => m[1]);
}

/** name -> {dir, manifest} of the copy's workspaces. */
function manifests(root) {
  const out = new Map();
  for (const parent of ['packages', 'plugins'])
    for (const d of fs.readdirSync(path.join(root, parent))) {
      const file = path.join(root, parent, d, 'package.json');
      if (!fs.existsSync(file)) continue;
      const manifest = readJson(file);
      out.set(manifest.name, { dir: path.dirname(file), manifest });
    }
  return out;
}

before(() => {
  copy = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-version-'));
  const files = execFileSync(
    'git',
    ['ls-files', '--cached', '--others', '--exclude-standard', '--', ...COPIED],
    { cwd: ROOT, encoding: 'utf8' },
  )
    .split('\n')
    .filter(f => f && fs.existsSync(path.join(ROOT, f)));
  for (const f of files) {
    fs.mkdirSync(path.dirname(path.join(copy, f)), { recursive: true });
    fs.copyFileSync(path.join(ROOT, f), path.join(copy, f));
  }
  // The tools (changesets, prettier and its config) are the repository's own.
  fs.symlinkSync(
    path.join(ROOT, 'node_modules'),
    path.join(copy, 'node_modules'),
  );
  before_ = new Map(
    [...manifests(copy)].map(([n, { manifest }]) => [n, manifest.version]),
  );
  pending = fs
    .readdirSync(path.join(copy, '.changeset'))
    .filter(f => f.endsWith('.md') && f !== 'README.md')
    .map(file => ({
      file,
      packages: changesetPackages(
        fs.readFileSync(path.join(copy, '.changeset', file), 'utf8'),
      ),
    }));
  fs.writeFileSync(
    path.join(copy, '.changeset/release-test-node-only.md'),
    "---\n'@rackside/plugin-servers-node': patch\n---\n\nA change to servers-node alone (the release test's).\n",
  );
  run = spawnSync(
    process.execPath,
    [path.join(ROOT, 'scripts/release/version.mjs'), '--root', copy],
    { encoding: 'utf8' },
  );
});

after(() => {
  if (copy) fs.rmSync(copy, { recursive: true, force: true });
});

describe('release versioning (on a copy of the repository)', () => {
  it('succeeds without a warning', () => {
    assert.equal(run.status, 0, run.stderr);
    // changesets' own lines go to stdout; stderr holds only release.sh's own log lines.
    const other = run.stderr
      .split('\n')
      .filter(l => l && !l.startsWith('release: '));
    assert.deepEqual(other, [], run.stderr);
    assert.doesNotMatch(
      run.stdout + run.stderr,
      /must depend on the current version|warn|unknown option|Ignored unknown/i,
    );
  });

  it('gives the six published packages and the operator one new version', () => {
    const version = run.stdout.trim().split('\n').pop();
    assert.match(version, /^\d+\.\d+\.\d+$/);
    const after_ = manifests(copy);
    const released = [...after_.values()].filter(
      ({ manifest }) =>
        !manifest.private || manifest.name === '@rackside/operator',
    );
    assert.equal(released.length, 7, released.map(r => r.manifest.name).join());
    for (const { manifest } of released) {
      assert.equal(manifest.version, version, manifest.name);
      assert.notEqual(
        before_.get(manifest.name),
        version,
        `${manifest.name} bumped`,
      );
    }
    // The demo and the test helpers stay out of it.
    for (const name of ['app', 'backend', '@rackside/rack-testing'])
      assert.equal(after_.get(name).manifest.version, before_.get(name), name);
  });

  it('consumes every changeset, the operator’s into its CHANGELOG', () => {
    const left = fs
      .readdirSync(path.join(copy, '.changeset'))
      .filter(f => f.endsWith('.md') && f !== 'README.md');
    assert.deepEqual(left, []);
    const version = readJson(
      path.join(copy, 'packages/operator/package.json'),
    ).version;
    const changelog = fs.readFileSync(
      path.join(copy, 'packages/operator/CHANGELOG.md'),
      'utf8',
    );
    assert.match(
      changelog,
      new RegExp(`^## ${version.replaceAll('.', '\\.')}$`, 'm'),
    );
    for (const { file } of pending.filter(p =>
      p.packages.includes('@rackside/operator'),
    )) {
      const body = fs
        .readFileSync(path.join(ROOT, '.changeset', file), 'utf8')
        .replace(/^---[\s\S]*?---\s*/, '');
      const firstWords = body.split(/\s+/).slice(0, 6).join(' ');
      assert.ok(
        changelog.replace(/\s+/g, ' ').includes(firstWords),
        `${file} in the operator's CHANGELOG`,
      );
    }
    // The group moves together: servers-backend got a changelog entry for servers-node's
    // change although no changeset named it.
    assert.match(
      fs.readFileSync(
        path.join(copy, 'plugins/servers-backend/CHANGELOG.md'),
        'utf8',
      ),
      new RegExp(`^## ${version.replaceAll('.', '\\.')}$`, 'm'),
    );
  });

  it('writes the version into the chart, the image tag and the artifacts’ names', () => {
    const version = readJson(
      path.join(copy, 'plugins/servers-common/package.json'),
    ).version;
    const chart = fs.readFileSync(
      path.join(copy, 'charts/rackside/Chart.yaml'),
      'utf8',
    );
    assert.match(chart, new RegExp(`^version: ${version}$`, 'm'));
    assert.match(chart, new RegExp(`^appVersion: '${version}'$`, 'm'));

    const [image, archive] = execFileSync(
      path.join(copy, 'scripts/image.sh'),
      ['--name'],
      { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
    )
      .trim()
      .split('\n');
    assert.equal(image, `rackside/operator:${version}`);
    assert.equal(archive, `dist/rackside-operator-${version}.oci.tar`);

    // The chart's package, as helm names it.
    const out = path.join(copy, 'dist');
    execFileSync(helmBinary(), [
      'package',
      path.join(copy, 'charts/rackside'),
      '--destination',
      out,
    ]);
    assert.deepEqual(fs.readdirSync(out), [`rackside-${version}.tgz`]);

    // Each package's tarball, as npm names it (what release.sh names its files).
    for (const [name, { dir, manifest }] of manifests(copy)) {
      if (manifest.private) continue;
      const [packed] = JSON.parse(
        execFileSync(
          'npm',
          ['pack', '--dry-run', '--json', '--ignore-scripts'],
          { cwd: dir, encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] },
        ),
      );
      assert.equal(
        packed.filename,
        `${name.replace(/^@/, '').replace('/', '-')}-${version}.tgz`,
      );
    }
  });
});
