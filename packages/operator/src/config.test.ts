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

  it('rejects a bad number', () => {
    expect(() => readConfig(['--probe-port', 'x'], {})).toThrow(/probe port/);
  });
});
