// The release tarballs are publishable and complete: each one's manifest points
// only at files it ships, and every package its code and types import is a
// dependency or peer (scripts/release/check-package.mjs). Reads the tarballs of
// RACKSIDE_RELEASE_DIR (default dist/release; the test command fills it with
// `scripts/release.sh --no-version --no-build`), or packs them itself when there
// are none. Also checks that the checker sees the faults it exists for, on
// tarballs doctored from a good one.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  checkTarball,
  importsOf,
} from '../../scripts/release/check-package.mjs';

const ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
const RELEASE =
  process.env.RACKSIDE_RELEASE_DIR ?? path.join(ROOT, 'dist/release');

/** The publishable workspaces (plugins/* not private). */
const publishable = fs
  .readdirSync(path.join(ROOT, 'plugins'))
  .map(d => path.join(ROOT, 'plugins', d, 'package.json'))
  .filter(f => fs.existsSync(f))
  .map(f => JSON.parse(fs.readFileSync(f, 'utf8')))
  .filter(m => !m.private);

const tarballOf = m =>
  path.join(
    RELEASE,
    `${m.name.replace(/^@/, '').replace('/', '-')}-${m.version}.tgz`,
  );

before(
  () => {
    if (publishable.every(m => fs.existsSync(tarballOf(m)))) return;
    execFileSync(
      path.join(ROOT, 'scripts/release.sh'),
      ['--no-version', '--no-build'],
      {
        stdio: ['ignore', 'ignore', 'inherit'],
        env: { ...process.env, RACKSIDE_RELEASE_DIR: RELEASE },
      },
    );
  },
  { timeout: 600_000 },
);

describe('release tarballs', () => {
  it('has one tarball per publishable package, the chart and SHA256SUMS that match', () => {
    assert.equal(publishable.length, 6, 'six publishable packages');
    const sums = fs.readFileSync(path.join(RELEASE, 'SHA256SUMS'), 'utf8');
    const listed = sums
      .trim()
      .split('\n')
      .map(l => l.split(/\s+/)[1]);
    for (const m of publishable) {
      assert.ok(
        listed.includes(path.basename(tarballOf(m))),
        `${m.name} in SHA256SUMS`,
      );
    }
    assert.ok(
      listed.some(f => /^rackside-\d+\.\d+\.\d+.*\.tgz$/.test(f)),
      'the chart in SHA256SUMS',
    );
    execFileSync('sha256sum', ['--check', '--quiet', 'SHA256SUMS'], {
      cwd: RELEASE,
    });
  });

  for (const m of publishable) {
    it(`${m.name}: manifest and imports as a consumer meets them`, () => {
      const { name, version, problems } = checkTarball(tarballOf(m));
      assert.equal(name, m.name);
      assert.equal(version, m.version);
      assert.deepEqual(problems, []);
    });
  }
});

/** A copy of `tgz` whose package.json (and files) `change` edits, packed again. */
function doctor(tgz, change) {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-doctored-'));
  execFileSync('tar', ['-xzf', tgz, '-C', dir]);
  const pkg = path.join(dir, 'package');
  const manifestFile = path.join(pkg, 'package.json');
  const manifest = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
  change(manifest, pkg);
  fs.writeFileSync(manifestFile, JSON.stringify(manifest, null, 2));
  const out = path.join(dir, 'doctored.tgz');
  execFileSync('tar', ['-czf', out, '-C', dir, 'package']);
  return out;
}

describe('the tarball check sees what it is for', () => {
  const node = () =>
    publishable.find(m => m.name.endsWith('/plugin-servers-node'));

  it('a module field pointing at a file not shipped', () => {
    const bad = doctor(tarballOf(node()), m => {
      m.module = 'dist/index.esm.js';
    });
    const { problems } = checkTarball(bad);
    assert.ok(
      problems.some(p => p.includes('module points at dist/index.esm.js')),
      problems.join('\n'),
    );
  });

  it('a type import of a package that is not declared', () => {
    const bad = doctor(tarballOf(node()), m => {
      delete m.dependencies['@backstage/plugin-permission-common'];
    });
    const { problems } = checkTarball(bad);
    assert.ok(
      problems.some(p =>
        /index\.d\.ts imports @backstage\/plugin-permission-common/.test(p),
      ),
      problems.join('\n'),
    );
  });

  it('a workspace: range, a private flag, no public access, no licence file', () => {
    const bad = doctor(tarballOf(node()), (m, pkg) => {
      m.dependencies['@rackside/plugin-servers-common'] = 'workspace:^';
      m.private = true;
      delete m.publishConfig;
      fs.rmSync(path.join(pkg, 'LICENSE'));
    });
    const { problems } = checkTarball(bad);
    for (const expected of [
      'workspace:^',
      '"private": true',
      'publishConfig.access',
      'no LICENSE',
    ]) {
      assert.ok(
        problems.some(p => p.includes(expected)),
        `${expected}:\n${problems.join('\n')}`,
      );
    }
  });

  it('a homepage elsewhere than the repository, no bugs address', () => {
    const bad = doctor(tarballOf(node()), m => {
      m.homepage = 'https://example.invalid/rackside';
      delete m.bugs;
    });
    const { problems } = checkTarball(bad);
    for (const expected of [
      'homepage https://example.invalid/rackside is not under',
      'no bugs.url',
    ]) {
      assert.ok(
        problems.some(p => p.includes(expected)),
        `${expected}:\n${problems.join('\n')}`,
      );
    }
  });

  it('reads imports, requires, dynamic imports and type references, not comments', () => {
    const found = importsOf(
      [
        "import a from 'a';",
        "export { b } from '@s/b/sub';",
        "const c = require('c');",
        "type D = import('d').D;",
        '/// <reference types="e" />',
        "// import z from 'commented';",
        "/* require('also-commented') */",
      ].join('\n'),
    );
    assert.deepEqual(found.sort(), ['@s/b/sub', 'a', 'c', 'd', 'e']);
  });
});
