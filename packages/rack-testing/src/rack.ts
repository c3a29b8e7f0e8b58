import { CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claimNet } from './net';

/** Walks up from the working directory (a package or the repo root) to the repo. */
function findRepoRoot(start: string): string {
  for (let dir = start; ; dir = path.dirname(dir)) {
    if (fs.existsSync(path.join(dir, 'e2e', 'rack', 'rack.mjs'))) return dir;
    if (path.dirname(dir) === dir) {
      throw new Error(`no e2e/rack/rack.mjs above ${start}`);
    }
  }
}

/** The repository root, so tests run from any package. */
export const REPO_ROOT = findRepoRoot(process.cwd());
const RACK_CLI = path.join(REPO_ROOT, 'e2e', 'rack', 'rack.mjs');

function cacheDir(): string {
  return (
    process.env.RACKSIDE_CACHE ?? path.join(os.homedir(), '.cache', 'rackside')
  );
}

/** What `rack.json` tells about a running rack (fields this package reads). */
export interface RackInfo {
  dir: string;
  net: number;
  server: string;
  kubeconfig: string;
  caFile: string;
  /** The rack's Alertmanager on loopback (absent with --no-alertmanager). */
  alertmanager?: { url: string };
  [key: string]: unknown;
}

export interface TestRack {
  info: RackInfo;
  /** Admin (system:masters) access. */
  adminKubeConfig(): KubeConfig;
  /** A ServiceAccount token minted through TokenRequest. */
  serviceAccountToken(namespace: string, name: string): Promise<string>;
  /** Access as a ServiceAccount with the given token. */
  tokenKubeConfig(token: string): KubeConfig;
  stop(): Promise<void>;
}

export interface StartTestRackOptions {
  withTalos?: boolean;
  withRedfish?: boolean;
  withWorkloads?: boolean;
}

function runRack(args: string[]): string {
  const result = spawnSync(process.execPath, [RACK_CLI, ...args], {
    cwd: REPO_ROOT,
    encoding: 'utf8',
    timeout: 180_000,
  });
  if (result.status !== 0) {
    throw new Error(
      `rack ${args[0]} failed (exit ${result.status}):\n${result.stdout}\n${result.stderr}`,
    );
  }
  return result.stdout;
}

/**
 * Starts a fresh, isolated simulated rack for one test file: its own
 * directory, ports and loopback network. Call `stop()` in `afterAll`.
 */
export async function startTestRack(
  options: StartTestRackOptions = {},
): Promise<TestRack> {
  const lease = claimNet(path.join(cacheDir(), 'nets'));
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-rack-'));
  fs.rmSync(dir, { recursive: true });
  const args = ['up', '--detach', '--dir', dir, '--net', String(lease.net)];
  if (options.withTalos === false) args.push('--no-talos');
  if (options.withRedfish === false) args.push('--no-redfish');
  if (options.withWorkloads === false) args.push('--no-workloads');
  try {
    runRack(args);
  } catch (error) {
    lease.release();
    throw error;
  }
  const info: RackInfo = {
    ...JSON.parse(fs.readFileSync(path.join(dir, 'rack.json'), 'utf8')),
    dir,
    net: lease.net,
  };

  const adminKubeConfig = () => {
    const kc = new KubeConfig();
    kc.loadFromFile(info.kubeconfig);
    return kc;
  };

  const tokenKubeConfig = (token: string) => {
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [
        {
          name: 'rack',
          server: info.server,
          caData: fs.readFileSync(info.caFile).toString('base64'),
        },
      ],
      users: [{ name: 'sa', token }],
      contexts: [{ name: 'rack', cluster: 'rack', user: 'sa' }],
      currentContext: 'rack',
    });
    return kc;
  };

  const serviceAccountToken = async (namespace: string, name: string) => {
    const core = adminKubeConfig().makeApiClient(CoreV1Api);
    const result = await core.createNamespacedServiceAccountToken({
      namespace,
      name,
      body: { spec: { audiences: [], expirationSeconds: 3600 } },
    });
    const token = result.status?.token;
    if (!token) throw new Error(`no token for ${namespace}/${name}`);
    return token;
  };

  return {
    info,
    adminKubeConfig,
    serviceAccountToken,
    tokenKubeConfig,
    async stop() {
      try {
        runRack(['down', '--dir', dir]);
      } finally {
        lease.release();
      }
    },
  };
}
