import { ConfigReader } from '@backstage/config';
import type { JsonObject } from '@backstage/types';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { makeKubeConfig, readClusterConfigs } from './clusterConfig';

function clusters(list: JsonObject[]) {
  return new ConfigReader({ servers: { clusters: list } });
}

describe('readClusterConfigs', () => {
  it('reads a token cluster with a token file and defaults', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-'));
    const tokenFile = path.join(dir, 'token');
    fs.writeFileSync(tokenFile, 'secret-token\n');
    const [cluster] = readClusterConfigs(
      clusters([
        {
          name: 'plant-a',
          url: 'https://127.0.0.1:6443',
          serviceAccountTokenFile: tokenFile,
        },
      ]),
    );
    expect(cluster).toEqual({
      name: 'plant-a',
      title: 'plant-a',
      operatorNamespace: 'rackside-system',
      access: {
        type: 'token',
        url: 'https://127.0.0.1:6443',
        caData: undefined,
        token: 'secret-token',
        tokenFile,
        skipTLSVerify: false,
      },
    });
    const kc = makeKubeConfig(cluster);
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
  });

  it('reads a rotated token file again: the next request carries the new token', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rackside-'));
    const tokenFile = path.join(dir, 'token');
    fs.writeFileSync(tokenFile, 'first-token\n');
    const [cluster] = readClusterConfigs(
      clusters([
        {
          name: 'plant-a',
          url: 'https://127.0.0.1:6443',
          serviceAccountTokenFile: tokenFile,
        },
      ]),
    );
    const kc = makeKubeConfig(cluster);
    const authorization = async () => {
      const opts: { headers?: Record<string, string> } = { headers: {} };
      await kc.applyToHTTPSOptions(opts);
      return opts.headers?.Authorization;
    };
    expect(await authorization()).toBe('Bearer first-token');
    // A projected volume's rotation: a new file renamed over the old one.
    fs.writeFileSync(`${tokenFile}.new`, 'second-token\n');
    fs.renameSync(`${tokenFile}.new`, tokenFile);
    expect(await authorization()).toBe('Bearer second-token');
    // Rewritten in place (kubectl create token > file), same size: still seen.
    fs.writeFileSync(tokenFile, 'third-tokens\n');
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(tokenFile, later, later);
    expect(await authorization()).toBe('Bearer third-tokens');
    // Caught empty or missing half-way through a rewrite: the last token stays.
    fs.writeFileSync(tokenFile, '');
    expect(await authorization()).toBe('Bearer third-tokens');
    fs.rmSync(tokenFile);
    expect(await authorization()).toBe('Bearer third-tokens');
    fs.writeFileSync(tokenFile, 'fourth-token');
    expect(await authorization()).toBe('Bearer fourth-token');
  });

  it('keeps an inline token as it is', async () => {
    const [cluster] = readClusterConfigs(
      clusters([
        {
          name: 'plant-a',
          url: 'https://127.0.0.1:6443',
          serviceAccountToken: 'inline-token',
        },
      ]),
    );
    expect(cluster.access).not.toHaveProperty('tokenFile');
    const opts: { headers?: Record<string, string> } = { headers: {} };
    await makeKubeConfig(cluster).applyToHTTPSOptions(opts);
    expect(opts.headers?.Authorization).toBe('Bearer inline-token');
  });

  it('names the offending key', () => {
    expect(() =>
      readClusterConfigs(clusters([{ name: 'Plant A', inCluster: true }])),
    ).toThrow(/servers\.clusters\[0\]\.name/);
    expect(() =>
      readClusterConfigs(
        clusters([{ name: 'a', url: 'https://x', kubeconfigFile: '/k' }]),
      ),
    ).toThrow(/servers\.clusters\[0\]: set exactly one/);
    expect(() =>
      readClusterConfigs(clusters([{ name: 'a', url: 'https://x' }])),
    ).toThrow(/needs serviceAccountToken/);
    expect(() =>
      readClusterConfigs(
        clusters([
          { name: 'a', inCluster: true },
          { name: 'a', inCluster: true },
        ]),
      ),
    ).toThrow(/servers\.clusters\[1\]\.name: cluster "a" appears twice/);
  });

  it('returns no clusters when none are configured', () => {
    expect(readClusterConfigs(new ConfigReader({}))).toEqual([]);
  });
});
