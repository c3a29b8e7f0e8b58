import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { ConfigError, parseDuration, readConfig, usage } from './config';

describe('readConfig', () => {
  it('has defaults', () => {
    const config = readConfig([], {});
    expect(config).toMatchObject({
      kubeconfig: undefined,
      namespace: 'rackside-system',
      probePort: 8081,
      workers: 4,
    });
    expect(config.identity).toBeTruthy();
  });

  it('reads the environment, and flags win over it', () => {
    const env = {
      KUBECONFIG: '/env/kc',
      POD_NAMESPACE: 'ops',
      RACKSIDE_OPERATOR_PROBE_PORT: '9000',
      RACKSIDE_OPERATOR_WORKERS: '2',
      POD_NAME: 'op-0',
    };
    expect(readConfig([], env)).toEqual({
      kubeconfig: '/env/kc',
      namespace: 'ops',
      probePort: 9000,
      workers: 2,
      identity: 'op-0',
      rebootDeadlineSeconds: 900,
      unansweredDeadlineSeconds: 300,
      talosImagePrefixes: [],
      firmwareSources: [],
      firmwareChecksumRequired: [],
      upgradeDeadlineSeconds: 1800,
      reclaimMaintenanceWaitSeconds: 600,
      reclaimMaxTtlSeconds: 3600,
      reclaimReconcileTimeoutSeconds: 120,
      joinTimeoutSeconds: 900,
      leaderElection: {
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
      },
      retentionMs: 7 * 24 * 3600 * 1000,
      healthIntervalMs: 15 * 60 * 1000,
      healthConcurrency: 4,
      healthFullIntervalMs: 12 * 3600 * 1000,
      healthReadingDeadlineMs: 60_000,
      logFormat: 'json',
      logLevel: 'info',
      planGateReads: [],
      webhook: {
        port: 0,
        host: '0.0.0.0',
        certFile: undefined,
        keyFile: undefined,
        certHosts: expect.arrayContaining(['127.0.0.1', 'localhost']),
        caOut: undefined,
      },
    });
    expect(
      readConfig(
        ['--kubeconfig', '/flag/kc', '--workers=8', '--identity', 'me'],
        env,
      ),
    ).toMatchObject({ kubeconfig: '/flag/kc', workers: 8, identity: 'me' });
    expect(
      readConfig([], {
        ...env,
        RACKSIDE_PLAN_GATE_READS: 'cephclusters.ceph.rook.io, configmaps',
      }).planGateReads,
    ).toEqual(['cephclusters.ceph.rook.io', 'configmaps']);
  });

  it("reads the node it runs on from the chart's NODE_NAME or --node-name, and knows none otherwise", () => {
    expect(readConfig([], {}).nodeName).toBeUndefined();
    expect(readConfig([], { NODE_NAME: 'worker-3' }).nodeName).toBe('worker-3');
    expect(
      readConfig(['--node-name', 'worker-4'], { NODE_NAME: 'worker-3' })
        .nodeName,
    ).toBe('worker-4');
  });

  it('reads the power deadlines', () => {
    expect(
      readConfig(['--reboot-deadline-seconds', '60'], {
        RACKSIDE_UNANSWERED_DEADLINE_SECONDS: '30',
      }),
    ).toMatchObject({
      rebootDeadlineSeconds: 60,
      unansweredDeadlineSeconds: 30,
    });
    expect(() => readConfig(['--reboot-deadline-seconds', '0'], {})).toThrow(
      /--reboot-deadline-seconds must be a positive integer/,
    );
  });

  it('reads the Talos image prefixes an upgrade may install, refusing one it cannot read', () => {
    expect(
      readConfig(['--upgrade-deadline-seconds', '600'], {
        RACKSIDE_TALOS_IMAGE_PREFIXES:
          'factory.talos.dev/installer/, ghcr.io/siderolabs/installer',
      }),
    ).toMatchObject({
      talosImagePrefixes: [
        'factory.talos.dev/installer/',
        'ghcr.io/siderolabs/installer',
      ],
      upgradeDeadlineSeconds: 600,
    });
    expect(() =>
      readConfig(
        ['--talos-image-prefixes', 'factory.talos.dev/,https://evil.example/'],
        {},
      ),
    ).toThrow(/--talos-image-prefixes: .*"https:\/\/evil.example\/"/);
    expect(() =>
      readConfig(['--talos-image-prefixes', 'ghcr.io/x:v1.12'], {}),
    ).toThrow(ConfigError);
  });

  it('reads the firmware sources, refusing anything but an https origin', () => {
    expect(
      readConfig([], {
        RACKSIDE_FIRMWARE_SOURCES:
          'https://firmware.example.com, https://10.0.0.5:8443/',
      }),
    ).toMatchObject({
      firmwareSources: [
        'https://firmware.example.com',
        'https://10.0.0.5:8443/',
      ],
    });
    for (const bad of [
      'http://firmware.example.com',
      'https://firmware.example.com/images',
      'https://user@firmware.example.com',
      'firmware.example.com',
    ]) {
      expect(() => readConfig(['--firmware-sources', bad], {})).toThrow(
        /--firmware-sources: not an https origin/,
      );
    }
  });

  it('reads the sources requiring a checksum (allowed sources too), the credentials Secret and the CA file', () => {
    expect(
      readConfig(
        [
          '--firmware-sources',
          'https://a.example',
          '--firmware-sources-requiring-checksum',
          'https://b.example',
          '--firmware-source-credentials-secret',
          'firmware-sources',
          '--firmware-sources-ca-file',
          '/etc/rackside/fw-ca.pem',
        ],
        {},
      ),
    ).toMatchObject({
      firmwareSources: ['https://a.example', 'https://b.example'],
      firmwareChecksumRequired: ['https://b.example'],
      firmwareSourceCredentialsSecret: 'firmware-sources',
      firmwareSourcesCaFile: '/etc/rackside/fw-ca.pem',
    });
    expect(() =>
      readConfig(
        ['--firmware-sources-requiring-checksum', 'https://b.example/path'],
        {},
      ),
    ).toThrow(/--firmware-sources-requiring-checksum: not an https origin/);
    for (const bad of ['other-ns/secret', 'Secret', '../x']) {
      expect(() =>
        readConfig(['--firmware-source-credentials-secret', bad], {}),
      ).toThrow(/--firmware-source-credentials-secret: not a Secret name/);
    }
  });

  it('reads the reclaim and join limits', () => {
    expect(
      readConfig(
        [
          '--reclaim-maintenance-wait-seconds',
          '20',
          '--reclaim-max-ttl-seconds=30',
          '--join-timeout-seconds',
          '60',
        ],
        { RACKSIDE_RECLAIM_RECONCILE_TIMEOUT_SECONDS: '10' },
      ),
    ).toMatchObject({
      reclaimMaintenanceWaitSeconds: 20,
      reclaimMaxTtlSeconds: 30,
      reclaimReconcileTimeoutSeconds: 10,
      joinTimeoutSeconds: 60,
    });
    expect(() => readConfig(['--reclaim-max-ttl-seconds', '7200'], {})).toThrow(
      /at most 3600 seconds/,
    );
  });

  it('reads the webhook settings: off with port 0, a certificate from files, or self-signed hosts', () => {
    expect(readConfig(['--webhook-port', '9443'], {}).webhook.port).toBe(9443);
    expect(readConfig(['--webhook-port', '0'], {}).webhook.port).toBe(0);
    expect(
      readConfig(
        [
          '--webhook-cert-file',
          '/tls/tls.crt',
          '--webhook-key-file',
          '/tls/tls.key',
        ],
        { RACKSIDE_OPERATOR_WEBHOOK_PORT: '8443' },
      ).webhook,
    ).toMatchObject({
      port: 8443,
      certFile: '/tls/tls.crt',
      keyFile: '/tls/tls.key',
    });
    expect(
      readConfig(
        [
          '--webhook-cert-hosts',
          '127.0.0.1, rackside-operator.rackside-system.svc',
          '--webhook-ca-out',
          '/tmp/ca.crt',
        ],
        {},
      ).webhook,
    ).toMatchObject({
      certHosts: ['127.0.0.1', 'rackside-operator.rackside-system.svc'],
      caOut: '/tmp/ca.crt',
    });
    expect(() => readConfig(['--webhook-port', '70000'], {})).toThrow(
      /--webhook-port must be 0 \(off\) to 65535/,
    );
  });

  it('rejects a bad number', () => {
    expect(() => readConfig(['--probe-port', 'x'], {})).toThrow(
      /--probe-port must be a positive integer, got "x"/,
    );
    expect(() => readConfig(['--workers', '2.5'], {})).toThrow(ConfigError);
    expect(() => readConfig([], { RACKSIDE_OPERATOR_WORKERS: '-1' })).toThrow(
      /--workers must be a positive integer, got "-1"/,
    );
  });

  it('is strict: an unknown flag, a flag without its value, a positional or an empty value is an error', () => {
    for (const argv of [
      ['--no-such-flag', 'x'],
      ['--workres=4'],
      ['--workers'],
      ['stray'],
      ['-x'],
      ['--namespace', ''],
    ]) {
      expect(() => readConfig(argv, {})).toThrow(ConfigError);
    }
    expect(() => readConfig(['--retention'], {})).toThrow(
      /argument missing|requires an argument|--retention/,
    );
  });

  it('reads --health-reading-deadline (RACKSIDE_HEALTH_READING_DEADLINE) and refuses one without a unit or zero', () => {
    expect(readConfig(['--health-reading-deadline=90s'], {})).toMatchObject({
      healthReadingDeadlineMs: 90_000,
    });
    expect(
      readConfig([], { RACKSIDE_HEALTH_READING_DEADLINE: '2m' }),
    ).toMatchObject({ healthReadingDeadlineMs: 120_000 });
    expect(() => readConfig(['--health-reading-deadline=60'], {})).toThrow(
      /--health-reading-deadline must be a duration with a unit/,
    );
    expect(() => readConfig(['--health-reading-deadline=0s'], {})).toThrow(
      /--health-reading-deadline must be a duration/,
    );
  });

  it('reads the health sweep flags and refuses a zero interval or concurrency', () => {
    expect(
      readConfig(['--health-interval=5m', '--health-concurrency', '2'], {
        RACKSIDE_HEALTH_FULL_INTERVAL: '1h',
      }),
    ).toMatchObject({
      healthIntervalMs: 300_000,
      healthConcurrency: 2,
      healthFullIntervalMs: 3_600_000,
    });
    expect(() => readConfig(['--health-interval=0s'], {})).toThrow(
      /--health-interval must be a duration/,
    );
    expect(() => readConfig(['--health-concurrency=0'], {})).toThrow(
      /--health-concurrency must be a positive integer/,
    );
  });

  it('reads durations with units for the election and retention', () => {
    expect(parseDuration('7d')).toBe(7 * 86_400_000);
    expect(parseDuration('12h')).toBe(12 * 3_600_000);
    expect(parseDuration('30s')).toBe(30_000);
    expect(parseDuration('500ms')).toBe(500);
    expect(parseDuration('1h30m')).toBe(5_400_000);
    expect(parseDuration('1.5s')).toBe(1500);
    for (const bad of ['7', 'd', '7days', '-1s', '0s', '', '1 h']) {
      expect(parseDuration(bad)).toBeUndefined();
    }
    expect(
      readConfig(
        [
          '--lease-duration=20s',
          '--renew-deadline',
          '12s',
          '--retention',
          '30s',
        ],
        { RACKSIDE_RETRY_PERIOD: '3s' },
      ),
    ).toMatchObject({
      leaderElection: {
        leaseDurationMs: 20_000,
        renewDeadlineMs: 12_000,
        retryPeriodMs: 3_000,
      },
      retentionMs: 30_000,
    });
    expect(readConfig(['--log-format', 'text'], {}).logFormat).toBe('text');
    expect(() => readConfig(['--log-format', 'xml'], {})).toThrow(
      /--log-format must be json or text, got "xml"/,
    );
    expect(() => readConfig(['--retention', '7'], {})).toThrow(
      /--retention must be a duration with a unit/,
    );
  });

  it('refuses a renew deadline that is not shorter than the lease duration, or a retry period that is not shorter than it', () => {
    expect(() =>
      readConfig(['--lease-duration', '10s', '--renew-deadline', '10s'], {}),
    ).toThrow(
      /--renew-deadline \(10000 ms\) must be shorter than --lease-duration/,
    );
    expect(() =>
      readConfig(['--renew-deadline', '2s', '--retry-period', '2s'], {}),
    ).toThrow(
      /--retry-period \(2000 ms\) must be shorter than --renew-deadline/,
    );
  });

  it('has a usage text naming every flag and its variables', () => {
    const text = usage();
    for (const flag of [
      '--lease-duration',
      '--renew-deadline',
      '--retry-period',
      '--retention',
      '--webhook-port',
    ]) {
      expect(text).toContain(flag);
    }
    expect(text).toContain('RACKSIDE_RETENTION');
  });
});

describe('the entry point', () => {
  const run = (...args: string[]) =>
    spawnSync(
      process.execPath,
      [
        '--require',
        require.resolve('@backstage/cli/config/nodeTransform.cjs'),
        path.join(__dirname, 'index.ts'),
        ...args,
      ],
      {
        encoding: 'utf8',
        timeout: 60_000,
        env: { ...process.env, KUBECONFIG: '' },
      },
    );

  it('exits 2 with the usage on an unknown flag or a bad value, before touching a cluster', () => {
    const unknown = run('--kubeconfig', '/nonexistent', '--no-such-flag', '1');
    expect(unknown.status).toBe(2);
    expect(unknown.stderr).toMatch(/Unknown option '--no-such-flag'/);
    expect(unknown.stderr).toContain('usage: rackside-operator');
    const bad = run('--kubeconfig', '/nonexistent', '--retention', 'forever');
    expect(bad.status).toBe(2);
    expect(bad.stderr).toMatch(/--retention must be a duration/);
    expect(bad.stderr).toContain('usage: rackside-operator');
  });

  it('prints the usage and exits 0 on --help', () => {
    const help = run('--help');
    expect(help.status).toBe(0);
    expect(help.stdout).toContain('--renew-deadline');
    expect(help.stdout).toContain('--log-level');
    expect(help.stdout).toContain('--version');
  });

  it("prints the package's version and exits 0 on --version, before touching a cluster", () => {
    const { version } = require('../package.json');
    const answer = run('--version', '--kubeconfig', '/nonexistent');
    expect(answer.status).toBe(0);
    expect(answer.stdout).toBe(`rackside-operator ${version}\n`);
  });
});

describe('--log-level', () => {
  it('is info by default, read from RACKSIDE_LOG_LEVEL, and a flag wins', () => {
    expect(readConfig([], {}).logLevel).toBe('info');
    expect(readConfig([], { RACKSIDE_LOG_LEVEL: 'warn' }).logLevel).toBe(
      'warn',
    );
    expect(
      readConfig(['--log-level', 'debug'], { RACKSIDE_LOG_LEVEL: 'warn' })
        .logLevel,
    ).toBe('debug');
  });

  it('refuses a level it does not know, naming the four', () => {
    expect(() => readConfig(['--log-level', 'verbose'], {})).toThrow(
      /--log-level must be debug, info, warn or error, got "verbose"/,
    );
    expect(() => readConfig([], { RACKSIDE_LOG_LEVEL: 'ERROR' })).toThrow(
      ConfigError,
    );
  });
});

describe('--maintenance-url', () => {
  const am = ['--alertmanager-url', 'http://alertmanager:9093'];
  it("is the page linked from a maintenance's silences, with {{name}} for its name", () => {
    expect(readConfig(am, {}).alerting?.maintenanceUrl).toBeUndefined();
    expect(
      readConfig(am, {
        RACKSIDE_MAINTENANCE_URL:
          'https://backstage.example.com/servers/maintenances/prod-a/{{name}}',
      }).alerting?.maintenanceUrl,
    ).toBe(
      'https://backstage.example.com/servers/maintenances/prod-a/{{name}}',
    );
  });

  it('refuses a URL without {{name}}, or not http(s)', () => {
    expect(() =>
      readConfig(
        [...am, '--maintenance-url', 'https://backstage.example.com/servers'],
        {},
      ),
    ).toThrow(/--maintenance-url must be an http\(s\) URL with \{\{name\}\}/);
    expect(() =>
      readConfig(
        [...am, '--maintenance-url', 'ftp://files.example.com/{{name}}'],
        {},
      ),
    ).toThrow(ConfigError);
  });
});
