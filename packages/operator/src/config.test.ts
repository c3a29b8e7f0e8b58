import { readConfig } from './config';

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
      reclaimMaintenanceWaitSeconds: 600,
      reclaimMaxTtlSeconds: 3600,
      reclaimReconcileTimeoutSeconds: 120,
      joinTimeoutSeconds: 900,
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
      /reboot deadline must be a positive integer/,
    );
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
      /webhook port must be 0 \(off\) to 65535/,
    );
  });

  it('rejects a bad number', () => {
    expect(() => readConfig(['--probe-port', 'x'], {})).toThrow(/probe port/);
  });
});
