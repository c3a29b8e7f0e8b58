import { ConfigReader } from '@backstage/config';
import { loadConfigSchema } from '@backstage/config-loader';
import fs from 'node:fs';
import path from 'node:path';
import yaml from 'yaml';
import { DEFAULT_BLOCKED_AFTER_MS, readNotificationsConfig } from './config';

const read = (notifications?: object) =>
  readNotificationsConfig(
    new ConfigReader(notifications ? { servers: { notifications } } : {}),
  );

describe('servers.notifications', () => {
  it('defaults to on, with a drain told blocked after 10 minutes', () => {
    expect(read()).toEqual({ enabled: true, blockedAfterMs: 600_000 });
    expect(DEFAULT_BLOCKED_AFTER_MS).toBe(600_000);
  });

  it('reads blockedAfter as a duration string, an ISO duration or an object', () => {
    expect(read({ blockedAfter: '90s' }).blockedAfterMs).toBe(90_000);
    expect(read({ blockedAfter: 'PT15M' }).blockedAfterMs).toBe(900_000);
    expect(
      read({ blockedAfter: { hours: 1, minutes: 30 } }).blockedAfterMs,
    ).toBe(5_400_000);
    expect(read({ enabled: false }).enabled).toBe(false);
  });

  it('refuses a duration it cannot use, naming the key', () => {
    expect(() => read({ blockedAfter: 'soon' })).toThrow(
      /servers\.notifications\.blockedAfter/,
    );
    expect(() => read({ blockedAfter: { months: 1 } })).toThrow(
      /servers\.notifications\.blockedAfter: months are not accepted/,
    );
    expect(() => read({ blockedAfter: '0s' })).toThrow(/longer than zero/);
  });

  it('is declared in the plugin config schema', async () => {
    const demoConfig = yaml.parse(
      fs.readFileSync(
        path.resolve(__dirname, '../../../../app-config.yaml'),
        'utf8',
      ),
    );
    const schema = await loadConfigSchema({
      dependencies: ['@rackside/plugin-servers-backend'],
    });
    const ok = (notifications: object) =>
      schema.process([
        {
          data: demoConfig,
          context: 'app-config.yaml',
        },
        {
          data: { servers: { notifications } },
          context: 'test',
        },
      ]);
    expect(() => ok({ enabled: true, blockedAfter: '10m' })).not.toThrow();
    expect(() => ok({ blockedAfter: { minutes: 10 } })).not.toThrow();
    const declared = JSON.stringify(schema.serialize());
    expect(declared).toContain('"blockedAfter"');
    expect(declared).toContain(
      'How long a PodDisruptionBudget may block a drain',
    );
  });
});
