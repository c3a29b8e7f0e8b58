// Publishes a release made by scripts/release.sh: the npm tarballs of dist/release to an npm
// registry, the operator image (scripts/image.sh's dist/rackside-operator-<v>.oci.tar) and
// the Helm chart to an OCI registry, the chart's values.yaml pointing at the pushed image by
// its digest (image.repository and image.digest), so that an install of the published chart
// pulls exactly the image published with it.
//
//   node scripts/release/publish.mjs          (scripts/release.sh --publish runs it)
//
// Where to (environment):
//   RACKSIDE_NPM_REGISTRY   the npm registry's URL; default: .yarnrc.yml's
//                           npmScopes.rackside.npmPublishRegistry, else its npmRegistryServer
//   RACKSIDE_NPM_TOKEN      a token for it; default: npmScopes.rackside.npmAuthToken, else
//                           what npm's own configuration (~/.npmrc) holds for that registry
//   RACKSIDE_OCI_REGISTRY   host[:port] of the container registry (e.g. registry.example.com,
//                           127.0.0.1:5000); the image goes to HOST/rackside/operator, the
//                           chart to oci://HOST/charts/rackside
//   RACKSIDE_OCI_PLAIN_HTTP=1  talk plain HTTP to it (a registry on localhost); credentials
//                           come from `helm registry login` and skopeo's auth file
//   RACKSIDE_RELEASE_DIR    where the tarballs are (default dist/release)
// The version is the fixed group's (every released package.json carries it, release.sh
// checks); the tarballs, the image archive and the chart must all be of that version.
//
// The functions are exported for the tests (e2e/release/, through e2e/lib/registries.mjs).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const REPO_ROOT = path.resolve(
  path.dirname(fileURLToPath(import.meta.url)),
  '../..',
);
/** Where the image goes inside the OCI registry, and the chart's folder there. */
export const IMAGE_REPOSITORY = 'rackside/operator';
export const CHART_FOLDER = 'charts';
export const CHART_NAME = 'rackside';

const cacheDir = () =>
  process.env.RACKSIDE_CACHE ?? path.join(os.homedir(), '.cache/rackside');
const log = msg => process.stderr.write(`publish: ${msg}\n`);

function run(cmd, args, opts = {}) {
  try {
    return execFileSync(cmd, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      ...opts,
    });
  } catch (error) {
    throw new Error(
      `${cmd} ${args.join(' ')} failed:\n${error.stdout ?? ''}${
        error.stderr ?? error.message
      }`,
    );
  }
}

/** The release's one version: the fixed group's, read from servers-common. */
export function releaseVersion(root = REPO_ROOT) {
  return JSON.parse(
    fs.readFileSync(
      path.join(root, 'plugins/servers-common/package.json'),
      'utf8',
    ),
  ).version;
}

/** The helm that e2e/rack/build.sh builds (RACKSIDE_HELM overrides). */
export function helmBinary() {
  if (process.env.RACKSIDE_HELM) return process.env.RACKSIDE_HELM;
  const versions = fs.readFileSync(
    path.join(REPO_ROOT, 'e2e/rack/versions.env'),
    'utf8',
  );
  const version = /^HELM_VERSION=(\S+)$/m.exec(versions)[1];
  const bin = path.join(cacheDir(), 'bin', `helm-${version}`, 'helm');
  if (!fs.existsSync(bin))
    throw new Error(`no helm at ${bin}: run e2e/rack/build.sh`);
  return bin;
}

/** host[:port] of a registry given as a URL, an oci:// reference or a host. */
export function registryHost(registry) {
  const value = typeof registry === 'string' ? registry : registry.host;
  return value.replace(/^[a-z]+:\/\//, '').replace(/\/.*$/, '');
}

/** The package.json inside an npm tarball. */
export function tarballManifest(tgz) {
  return JSON.parse(
    run('tar', ['-xzOf', tgz, 'package/package.json'], {
      maxBuffer: 16 << 20,
    }),
  );
}

/**
 * The npm tarballs of `releaseDir` for `version`, dependencies before dependents (a
 * dependent published first would name a version its registry does not have yet).
 */
export function releaseTarballs(releaseDir, version) {
  const all = fs
    .readdirSync(releaseDir)
    .filter(f => f.endsWith('.tgz') && f.startsWith('rackside-plugin-'))
    .map(f => ({
      file: path.join(releaseDir, f),
      manifest: tarballManifest(path.join(releaseDir, f)),
    }))
    .filter(t => t.manifest.version === version);
  if (all.length === 0)
    throw new Error(`no package tarball of ${version} in ${releaseDir}`);
  const byName = new Map(all.map(t => [t.manifest.name, t]));
  const order = [];
  const seen = new Set();
  const visit = t => {
    if (seen.has(t.manifest.name)) return;
    seen.add(t.manifest.name);
    for (const dep of Object.keys(t.manifest.dependencies ?? {}))
      if (byName.has(dep)) visit(byName.get(dep));
    order.push(t);
  };
  [...all]
    .sort((a, b) => a.manifest.name.localeCompare(b.manifest.name))
    .forEach(visit);
  return order;
}

/** `yarn config get KEY` in the repository, or undefined. */
function yarnConfig(key) {
  try {
    const value = execFileSync('yarn', ['config', 'get', key], {
      cwd: REPO_ROOT,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return value && value !== 'undefined' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The npm registry and token of a release, from the environment or .yarnrc.yml. */
export function configuredNpmRegistry() {
  const url =
    process.env.RACKSIDE_NPM_REGISTRY ??
    yarnConfig('npmScopes.rackside.npmPublishRegistry') ??
    yarnConfig('npmScopes.rackside.npmRegistryServer');
  const token =
    process.env.RACKSIDE_NPM_TOKEN ??
    yarnConfig('npmScopes.rackside.npmAuthToken');
  return { url, token };
}

/**
 * `npm publish` of each tarball of `version` in `releaseDir` to `registry` ({url, token}
 * or a URL), dependencies first. A token is written to a throw-away npm configuration,
 * never to the user's. Answers the published names.
 */
export function publishPackages(registry, version, options = {}) {
  const url = typeof registry === 'string' ? registry : registry.url;
  const token =
    options.token ??
    (typeof registry === 'string' ? undefined : registry.token);
  const releaseDir =
    options.releaseDir ??
    process.env.RACKSIDE_RELEASE_DIR ??
    path.join(REPO_ROOT, 'dist/release');
  const tarballs = releaseTarballs(releaseDir, version);
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-publish-'));
  try {
    const args = [`--registry=${url}`, `--@rackside:registry=${url}`];
    const env = { ...process.env };
    if (token) {
      const npmrc = path.join(tmp, 'npmrc');
      const key = url.replace(/^https?:/, '').replace(/\/?$/, '/');
      fs.writeFileSync(npmrc, `${key}:_authToken=${token}\n`, { mode: 0o600 });
      args.push('--userconfig', npmrc);
    }
    // npm must not read the repository's .npmrc or run a workspace's scripts: a tarball is
    // published as it is.
    for (const t of tarballs) {
      log(`npm publish ${path.basename(t.file)} -> ${url}`);
      run(
        'npm',
        ['publish', t.file, ...args, '--ignore-scripts', '--access', 'public'],
        { cwd: tmp, env },
      );
    }
    return tarballs.map(t => t.manifest.name);
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/** The `rackside/operator:<tag>` name an OCI archive of scripts/image.sh carries. */
export function archiveTag(ociTar) {
  const index = JSON.parse(run('tar', ['-xOf', ociTar, 'index.json']));
  const name =
    index.manifests?.[0]?.annotations?.['org.opencontainers.image.ref.name'];
  const tag = name?.includes(':')
    ? name.slice(name.lastIndexOf(':') + 1)
    : name;
  if (!tag) throw new Error(`${ociTar} names no tag in its index.json`);
  return tag;
}

function needSkopeo() {
  try {
    execFileSync('skopeo', ['--version'], { stdio: 'ignore' });
  } catch {
    log("installing Debian's skopeo");
    execFileSync('apt-get', ['install', '-y', 'skopeo'], { stdio: 'ignore' });
  }
}

/**
 * Pushes the operator image of `ociTar` to `registry` as HOST/rackside/operator:<tag> (the
 * archive's own tag) with skopeo, keeping its manifest as built. Answers
 * {repository, tag, digest, ref} where ref is repository@digest.
 */
export function pushImage(registry, ociTar, options = {}) {
  needSkopeo();
  const host = registryHost(registry);
  const plainHttp = options.plainHttp ?? isLoopback(host);
  const tag = options.tag ?? archiveTag(ociTar);
  const repository = `${host}/${IMAGE_REPOSITORY}`;
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-push-'));
  try {
    const digestFile = path.join(tmp, 'digest');
    log(`skopeo copy ${path.basename(ociTar)} -> ${repository}:${tag}`);
    run('skopeo', [
      '--insecure-policy',
      'copy',
      '--quiet',
      '--preserve-digests',
      ...(plainHttp ? ['--dest-tls-verify=false'] : []),
      '--digestfile',
      digestFile,
      `oci-archive:${ociTar}`,
      `docker://${repository}:${tag}`,
    ]);
    const digest = fs.readFileSync(digestFile, 'utf8').trim();
    if (!/^sha256:[0-9a-f]{64}$/.test(digest))
      throw new Error(`skopeo wrote no digest: ${digest}`);
    return { repository, tag, digest, ref: `${repository}@${digest}` };
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * The chart's values.yaml text with the image block's `repository:` and `digest:` set
 * (comments and every other line kept).
 */
export function valuesWithImage(valuesYaml, { repository, digest }) {
  const lines = valuesYaml.split('\n');
  const start = lines.findIndex(l => /^image:\s*$/.test(l));
  if (start < 0) throw new Error('values.yaml has no top-level image: block');
  let end = start + 1;
  while (end < lines.length && (/^\s/.test(lines[end]) || lines[end] === ''))
    end++;
  const set = (key, value) => {
    const i = lines
      .slice(start + 1, end)
      .findIndex(l => new RegExp(`^  ${key}:`).test(l));
    if (i < 0) throw new Error(`values.yaml's image block has no ${key}:`);
    lines[start + 1 + i] = `  ${key}: ${JSON.stringify(value)}`;
  };
  set('repository', repository);
  set('digest', digest);
  return lines.join('\n');
}

/**
 * A copy of the packaged chart `chartTgz` whose values.yaml names the pushed image
 * ({repository, digest}), packaged again into `outDir` under the same file name.
 */
export function chartWithImage(chartTgz, image, outDir) {
  const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-chart-'));
  try {
    run('tar', ['-xzf', chartTgz, '-C', tmp]);
    const values = path.join(tmp, CHART_NAME, 'values.yaml');
    fs.writeFileSync(
      values,
      valuesWithImage(fs.readFileSync(values, 'utf8'), image),
    );
    fs.mkdirSync(outDir, { recursive: true });
    run(helmBinary(), [
      'package',
      path.join(tmp, CHART_NAME),
      '--destination',
      outDir,
    ]);
    return path.join(outDir, path.basename(chartTgz));
  } finally {
    fs.rmSync(tmp, { recursive: true, force: true });
  }
}

/**
 * `helm push` of a packaged chart to oci://HOST/charts. Answers the chart's reference,
 * oci://HOST/charts/rackside (install it with `--version`).
 */
export function pushChart(registry, chartTgz, options = {}) {
  const host = registryHost(registry);
  const plainHttp = options.plainHttp ?? isLoopback(host);
  log(`helm push ${path.basename(chartTgz)} -> oci://${host}/${CHART_FOLDER}`);
  run(helmBinary(), [
    'push',
    chartTgz,
    `oci://${host}/${CHART_FOLDER}`,
    ...(plainHttp ? ['--plain-http'] : []),
  ]);
  return `oci://${host}/${CHART_FOLDER}/${CHART_NAME}`;
}

function isLoopback(host) {
  return /^(localhost|127\.\d+\.\d+\.\d+|\[::1\])(:\d+)?$/.test(host);
}

/**
 * The whole publication of `version`: the packages to `npm`, the image then the chart
 * (pointing at the image's digest) to `oci`. Answers {version, packages, image, chart}.
 */
export function publishRelease({
  npm,
  oci,
  version = releaseVersion(),
  releaseDir = process.env.RACKSIDE_RELEASE_DIR ??
    path.join(REPO_ROOT, 'dist/release'),
  imageArchive = path.join(
    REPO_ROOT,
    'dist',
    `rackside-operator-${version}.oci.tar`,
  ),
  plainHttp,
}) {
  const chart = path.join(releaseDir, `${CHART_NAME}-${version}.tgz`);
  for (const f of [chart, imageArchive])
    if (!fs.existsSync(f)) throw new Error(`${f} missing`);
  const tag = archiveTag(imageArchive);
  if (tag !== version)
    throw new Error(`${imageArchive} is tagged ${tag}, not ${version}`);
  const packages = publishPackages(npm, version, { releaseDir });
  const image = pushImage(oci, imageArchive, { plainHttp });
  const published = chartWithImage(
    chart,
    image,
    path.join(releaseDir, 'published'),
  );
  const chartRef = pushChart(oci, published, { plainHttp });
  return { version, packages, image, chart: chartRef, chartFile: published };
}

async function main() {
  const npm = configuredNpmRegistry();
  const oci = process.env.RACKSIDE_OCI_REGISTRY;
  if (!npm.url)
    throw new Error(
      'no npm registry: set RACKSIDE_NPM_REGISTRY or npmScopes.rackside.npmPublishRegistry in .yarnrc.yml',
    );
  if (!oci) throw new Error('no OCI registry: set RACKSIDE_OCI_REGISTRY');
  const plain = process.env.RACKSIDE_OCI_PLAIN_HTTP;
  const result = publishRelease({
    npm,
    oci,
    plainHttp: plain === undefined ? undefined : plain === '1',
  });
  log(`published ${result.version}:`);
  for (const name of result.packages)
    log(`  ${name}@${result.version} on ${npm.url}`);
  log(`  image ${result.image.ref} (tag ${result.image.tag})`);
  log(`  chart ${result.chart} --version ${result.version}`);
  console.log(JSON.stringify(result));
}

if (
  process.argv[1] &&
  fileURLToPath(import.meta.url) === path.resolve(process.argv[1])
) {
  main().catch(error => {
    process.stderr.write(`publish: ${error.message}\n`);
    process.exit(1);
  });
}
