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
        skipTLSVerify: false,
      },
    });
    const kc = makeKubeConfig(cluster);
    expect(kc.getCurrentCluster()?.server).toBe('https://127.0.0.1:6443');
    expect(kc.getCurrentUser()?.token).toBe('secret-token');
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
