// Published, then pulled: the release of the working tree's version published for real
// (scripts/release/publish.mjs as `scripts/release.sh --publish` runs it, configured by
// RACKSIDE_NPM_REGISTRY, RACKSIDE_NPM_TOKEN and RACKSIDE_OCI_REGISTRY) to registries the
// test starts on loopback (e2e/lib/registries.mjs: Verdaccio, the CNCF Distribution
// registry), then read back as a user would: `npm view` of every package, `helm pull` of
// the chart from oci://, whose values name the image by the digest the registry holds, and
// the image's manifest fetched by that digest from the registry's v2 API.
//
// Reads the tarballs of RACKSIDE_RELEASE_DIR (default dist/release; made with
// `scripts/release.sh --no-version --no-build` when missing) and the operator image
// dist/rackside-operator-<version>.oci.tar (made with scripts/image.sh when missing: root,
// buildah; cached by its inputs).
//   node --test e2e/release/publish.test.mjs   (about a minute with both made; needs helm
//   from e2e/rack/build.sh, Go for the registry's first build, npm for Verdaccio's install)
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  releaseVersion,
  startNpmRegistry,
  startOciRegistry,
} from '../lib/registries.mjs';
import { helmBinary } from '../../scripts/release/publish.mjs';

const ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
const RELEASE =
  process.env.RACKSIDE_RELEASE_DIR ?? path.join(ROOT, 'dist/release');
const VERSION = releaseVersion();
const ARCHIVE = path.join(ROOT, 'dist', `rackside-operator-${VERSION}.oci.tar`);
const MANIFEST_TYPES = [
  'application/vnd.oci.image.manifest.v1+json',
  'application/vnd.oci.image.index.v1+json',
  'application/vnd.docker.distribution.manifest.v2+json',
].join(', ');

const publishable = fs
  .readdirSync(path.join(ROOT, 'plugins'))
  .map(d => path.join(ROOT, 'plugins', d, 'package.json'))
  .filter(f => fs.existsSync(f))
  .map(f => JSON.parse(fs.readFileSync(f, 'utf8')))
  .filter(m => !m.private);

let npm;
let oci;
let published;
let dir;

const helm = args =>
  execFileSync(helmBinary(), args, {
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...process.env,
      HELM_CACHE_HOME: path.join(dir, 'helm-cache'),
      HELM_CONFIG_HOME: path.join(dir, 'helm-config'),
    },
  });

before(
  async () => {
    dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-publish-test-'));
    const chart = path.join(RELEASE, `rackside-${VERSION}.tgz`);
    const tarballs = publishable.map(m =>
      path.join(
        RELEASE,
        `${m.name.replace(/^@/, '').replace('/', '-')}-${m.version}.tgz`,
      ),
    );
    if (![chart, ...tarballs].every(f => fs.existsSync(f)))
      execFileSync(
        path.join(ROOT, 'scripts/release.sh'),
        ['--no-version', '--no-build'],
        {
          stdio: ['ignore', 'ignore', 'inherit'],
          env: { ...process.env, RACKSIDE_RELEASE_DIR: RELEASE },
        },
      );
    if (!fs.existsSync(ARCHIVE))
      execFileSync(path.join(ROOT, 'scripts/image.sh'), {
        stdio: ['ignore', 'ignore', 'inherit'],
      });
    [npm, oci] = await Promise.all([startNpmRegistry(), startOciRegistry()]);
    // As `scripts/release.sh --publish` runs it: configured by the environment only.
    published = JSON.parse(
      execFileSync(
        process.execPath,
        [path.join(ROOT, 'scripts/release/publish.mjs')],
        {
          encoding: 'utf8',
          stdio: ['ignore', 'pipe', 'inherit'],
          env: {
            ...process.env,
            RACKSIDE_NPM_REGISTRY: npm.url,
            RACKSIDE_NPM_TOKEN: npm.token,
            RACKSIDE_OCI_REGISTRY: oci.host,
            RACKSIDE_RELEASE_DIR: RELEASE,
          },
        },
      ),
    );
  },
  { timeout: 1_200_000 },
);

after(async () => {
  await npm?.stop();
  await oci?.stop();
  if (dir) fs.rmSync(dir, { recursive: true, force: true });
  // The repackaged chart is the published one; it stays beside the release for a look.
});

describe(`publishing ${VERSION} to local registries`, () => {
  it('publishes the six packages: npm view answers each at the release version', () => {
    assert.equal(publishable.length, 6);
    assert.deepEqual(
      [...published.packages].sort(),
      publishable.map(m => m.name).sort(),
    );
    for (const m of publishable) {
      const view = JSON.parse(
        execFileSync(
          'npm',
          [
            'view',
            `${m.name}@${VERSION}`,
            '--json',
            `--registry=${npm.url}`,
            `--@rackside:registry=${npm.url}`,
            '--userconfig',
            path.join(dir, 'no-npmrc'),
          ],
          { encoding: 'utf8', cwd: dir },
        ),
      );
      assert.equal(view.name, m.name);
      assert.equal(view.version, VERSION);
      // What depends on another Rackside package names its version, not workspace:.
      for (const [dep, range] of Object.entries(view.dependencies ?? {}))
        if (dep.startsWith('@rackside/'))
          assert.equal(range, `^${VERSION}`, `${m.name} -> ${dep}`);
    }
  });

  it('pushes the image: its manifest is fetchable by digest and its tag names the same one', async () => {
    const { digest, repository, tag } = published.image;
    assert.match(digest, /^sha256:[0-9a-f]{64}$/);
    assert.equal(repository, `${oci.host}/rackside/operator`);
    assert.equal(tag, VERSION);
    const byDigest = await fetch(
      `${oci.url}/v2/rackside/operator/manifests/${digest}`,
      { headers: { accept: MANIFEST_TYPES } },
    );
    assert.equal(byDigest.status, 200);
    const body = Buffer.from(await byDigest.arrayBuffer());
    // The registry answers the very bytes the digest names.
    assert.equal(
      `sha256:${(await import('node:crypto'))
        .createHash('sha256')
        .update(body)
        .digest('hex')}`,
      digest,
    );
    const byTag = await fetch(
      `${oci.url}/v2/rackside/operator/manifests/${VERSION}`,
      { method: 'HEAD', headers: { accept: MANIFEST_TYPES } },
    );
    assert.equal(byTag.status, 200);
    assert.equal(byTag.headers.get('docker-content-digest'), digest);
  });

  it('pushes the chart: helm pull from oci:// gives it, its values name the image by that digest', () => {
    assert.equal(published.chart, `oci://${oci.host}/charts/rackside`);
    const pulled = path.join(dir, 'pulled');
    fs.mkdirSync(pulled);
    helm([
      'pull',
      published.chart,
      '--version',
      VERSION,
      '--plain-http',
      '--destination',
      pulled,
    ]);
    const tgz = path.join(pulled, `rackside-${VERSION}.tgz`);
    assert.ok(fs.existsSync(tgz), fs.readdirSync(pulled).join());
    const chart = helm(['show', 'chart', tgz]);
    assert.match(chart, new RegExp(`^version: ${VERSION}$`, 'm'));
    assert.match(chart, new RegExp(`^appVersion: "?'?${VERSION}`, 'm'));
    const values = helm(['show', 'values', tgz]);
    assert.match(
      values,
      new RegExp(`^  digest: "?${published.image.digest}"?$`, 'm'),
    );
    assert.match(
      values,
      new RegExp(`^  repository: "?${oci.host}/rackside/operator"?$`, 'm'),
    );
    // And an install renders the operator by digest.
    const rendered = helm([
      'template',
      'rackside',
      tgz,
      '--kube-version',
      '1.36.0',
    ]);
    assert.ok(
      rendered.includes(
        `image: "${oci.host}/rackside/operator@${published.image.digest}"`,
      ),
      'the operator Deployment pulls the image by digest',
    );
    helm(['lint', '--strict', tgz]);
  });
});
