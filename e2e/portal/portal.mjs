// A Backstage portal that is not ours: made by @backstage/create-app (pinned),
// cached by version under ~/.cache/rackside so a second run reuses the scaffold
// and its node_modules. Plain ESM, Node 22+.
//
//   const dir = await basePortal()   // the cached portal: create-app's app (new frontend
//                                    // system), its legacy app as packages/app-legacy, installed
//   resetPortal(dir)                 // back to the scaffold (git), node_modules kept
//   node e2e/portal/portal.mjs base  // warm the cache (prints the portal's directory)
//
// The scaffold is create-app's output as it comes (its package.json ranges, its
// app-config, its org), installed as `yarn install` resolves it here (create-app's
// yarn.lock seed is on GitHub, out of reach), with two changes that are not the
// portal's but the test's: create-app's `--legacy` app beside it as packages/app-legacy
// (package `app-legacy`), for the legacy frontend system's half of docs/install.md.
// Its Yarn is create-app's (`yarnPath` in .yarnrc.yml, the release it ships in .yarn/).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { cacheDir } from '../rack/rack.mjs';

export const CREATE_APP_VERSION =
  process.env.RACKSIDE_CREATE_APP_VERSION ?? '0.9.2';
/** Bump when the scaffold's recipe above changes: the cache key. */
const RECIPE = 3;

const log = msg => process.stderr.write(`portal: ${msg}\n`);

function run(cmd, args, opts = {}) {
  execFileSync(cmd, args, {
    stdio: ['ignore', 'inherit', 'inherit'],
    ...opts,
    env: { ...process.env, ...opts.env },
  });
}

const git = (dir, ...args) =>
  execFileSync('git', args, { cwd: dir, encoding: 'utf8', stdio: 'pipe' });

function editJson(file, change) {
  const m = JSON.parse(fs.readFileSync(file, 'utf8'));
  change(m);
  fs.writeFileSync(file, `${JSON.stringify(m, null, 2)}\n`);
}

/** create-app's CLI, installed once per version. Answers its bin. */
function createAppCli(root) {
  const dir = path.join(root, 'cli');
  const bin = path.join(dir, 'node_modules/.bin/backstage-create-app');
  if (!fs.existsSync(bin)) {
    log(`installing @backstage/create-app@${CREATE_APP_VERSION}`);
    fs.mkdirSync(dir, { recursive: true });
    fs.writeFileSync(path.join(dir, 'package.json'), '{"private":true}\n');
    run(
      'npm',
      [
        'install',
        '--no-save',
        '--no-package-lock',
        '--no-audit',
        '--no-fund',
        '--loglevel=error',
        `@backstage/create-app@${CREATE_APP_VERSION}`,
      ],
      { cwd: dir },
    );
  }
  return bin;
}

function scaffold(bin, dir, legacy) {
  run(bin, [...(legacy ? ['--legacy'] : []), '--path', dir, '--skip-install'], {
    cwd: path.dirname(dir),
    env: {
      BACKSTAGE_APP_NAME: 'portal',
      GIT_AUTHOR_NAME: 'rackside',
      GIT_COMMITTER_NAME: 'rackside',
      GIT_AUTHOR_EMAIL: 'test@rackside.invalid',
      GIT_COMMITTER_EMAIL: 'test@rackside.invalid',
    },
  });
}

/**
 * The cached, installed create-app portal (made on first use: about 5 to 10
 * minutes, most of it `yarn install`). Answers its directory.
 */
export function basePortal() {
  const root = path.join(
    cacheDir(),
    `create-app-${CREATE_APP_VERSION}-r${RECIPE}`,
  );
  const dir = path.join(root, 'portal');
  const done = path.join(root, 'complete');
  if (fs.existsSync(done)) return dir;

  fs.rmSync(dir, { recursive: true, force: true });
  const legacyDir = path.join(root, 'legacy');
  fs.rmSync(legacyDir, { recursive: true, force: true });
  fs.mkdirSync(root, { recursive: true });
  const bin = createAppCli(root);
  log(`scaffolding a portal with create-app ${CREATE_APP_VERSION} in ${dir}`);
  scaffold(bin, dir, false);
  scaffold(bin, legacyDir, true);
  fs.cpSync(
    path.join(legacyDir, 'packages/app'),
    path.join(dir, 'packages/app-legacy'),
    { recursive: true },
  );
  fs.rmSync(legacyDir, { recursive: true, force: true });
  editJson(path.join(dir, 'packages/app-legacy/package.json'), m => {
    m.name = 'app-legacy';
  });
  log('installing the portal (yarn install)');
  run('yarn', ['install'], {
    cwd: dir,
    env: { YARN_ENABLE_IMMUTABLE_INSTALLS: 'false', CI: '' },
  });
  if (!fs.existsSync(path.join(dir, '.git'))) git(dir, 'init', '-q');
  git(dir, 'add', '-A');
  git(
    dir,
    '-c',
    'user.name=rackside',
    '-c',
    'user.email=test@rackside.invalid',
    'commit',
    '-q',
    '--no-verify',
    '-m',
    'scaffold',
  );
  fs.writeFileSync(done, `${new Date().toISOString()}\n`);
  return dir;
}

/**
 * Puts the portal back to its scaffold: every tracked file as committed, every
 * untracked file gone, except node_modules (which the next `yarn install`
 * brings in line with the restored yarn.lock, linking only what differs).
 */
export function resetPortal(dir) {
  git(dir, 'checkout', '-q', '--', '.');
  git(dir, 'clean', '-q', '-fd');
}

if (process.argv[1] === fileURLToPath(import.meta.url)) {
  if (process.argv[2] === 'base') console.log(basePortal());
  else {
    console.error('usage: node e2e/portal/portal.mjs base');
    process.exit(2);
  }
}
