// A throwaway PostgreSQL server for the browser tests: Debian's `postgresql` (installed with
// apt-get when missing, as scripts/test.sh installs chromium), a cluster made with initdb in
// a temporary directory, listening on 127.0.0.1 only (and a Unix socket in that directory),
// with a password user that may create databases. Run as the `postgres` system user when
// we are root (PostgreSQL refuses to run as root).
//
//   const pg = await startPostgres({ port });  // { host, port, user, password, psql(db, sql), stop() }
import { execFileSync, spawnSync } from 'node:child_process';
import crypto from 'node:crypto';
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';

function log(msg) {
  process.stderr.write(`postgres: ${msg}\n`);
}

/** The newest installed server's bin directory, or undefined. */
function binDir() {
  const root = '/usr/lib/postgresql';
  if (!fs.existsSync(root)) return undefined;
  const versions = fs
    .readdirSync(root)
    .filter(v => fs.existsSync(path.join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions.length ? path.join(root, versions[0], 'bin') : undefined;
}

/** The server binaries, installing Debian's postgresql when they are missing. */
export function ensurePostgres() {
  let bin = binDir();
  if (bin) return bin;
  log("installing Debian's postgresql (apt-get)");
  const install = () =>
    spawnSync('apt-get', ['install', '-y', 'postgresql'], {
      stdio: 'ignore',
      env: { ...process.env, DEBIAN_FRONTEND: 'noninteractive' },
    }).status === 0;
  if (!install()) {
    spawnSync('apt-get', ['update'], { stdio: 'ignore' });
    install();
  }
  bin = binDir();
  if (!bin)
    throw new Error(
      'postgresql is not installed and apt-get could not install it',
    );
  return bin;
}

/** A free TCP port on 127.0.0.1. */
export function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

export async function startPostgres({ port } = {}) {
  const bin = ensurePostgres();
  port ??= await freePort();
  const asRoot = process.getuid?.() === 0;
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-pg-'));
  const data = path.join(dir, 'data');
  const user = 'rackside';
  const password = crypto.randomBytes(18).toString('base64url');
  const pwfile = path.join(dir, 'pwfile');
  fs.writeFileSync(pwfile, `${password}\n`, { mode: 0o600 });
  if (asRoot) {
    const id = flag =>
      Number(
        execFileSync('id', [flag, 'postgres'], { encoding: 'utf8' }).trim(),
      );
    const [uid, gid] = [id('-u'), id('-g')];
    fs.chownSync(dir, Number(uid), Number(gid));
    fs.chownSync(pwfile, Number(uid), Number(gid));
  }
  const run = (cmd, args, opts = {}) =>
    execFileSync(
      asRoot ? 'runuser' : cmd,
      asRoot ? ['-u', 'postgres', '--', cmd, ...args] : args,
      {
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'pipe'],
        cwd: dir,
        ...opts,
      },
    );
  run(path.join(bin, 'initdb'), [
    '-D',
    data,
    '-U',
    user,
    '--pwfile',
    pwfile,
    '--auth',
    'scram-sha-256',
    '--encoding',
    'UTF8',
    '--no-instructions',
  ]);
  fs.rmSync(pwfile, { force: true });
  run(path.join(bin, 'pg_ctl'), [
    '-D',
    data,
    '-l',
    path.join(dir, 'server.log'),
    '-w',
    '-t',
    '60',
    '-o',
    `-c listen_addresses=127.0.0.1 -p ${port} -k ${dir}`,
    'start',
  ]);
  log(`PostgreSQL on 127.0.0.1:${port} (data in ${data})`);
  const psql = (database, sql) =>
    run(
      path.join(bin, 'psql'),
      [
        '-h',
        '127.0.0.1',
        '-p',
        String(port),
        '-U',
        user,
        '-d',
        database,
        '-tAX',
        '-c',
        sql,
      ],
      { env: { ...process.env, PGPASSWORD: password } },
    ).trim();
  return {
    host: '127.0.0.1',
    port,
    user,
    password,
    dir,
    psql,
    async stop() {
      try {
        run(path.join(bin, 'pg_ctl'), ['-D', data, '-m', 'fast', '-w', 'stop']);
      } catch (error) {
        log(`stop: ${error.message}`);
      }
      if (process.env.RACKSIDE_E2E_KEEP !== '1')
        fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
