/*
 * The plugin's config schema (package.json `configSchema`, config.d.ts) marks the cluster
 * token and the pre-flight secret as secrets, so Backstage's root logger redacts them.
 * The root logger here is built as @backstage/backend-defaults builds it (WinstonLogger
 * with the redactions its config secret enumerator finds in the workspace's schemas),
 * writing to a stream the test reads.
 */
import {
  coreServices,
  createBackendModule,
  createServiceFactory,
} from '@backstage/backend-plugin-api';
import { createConfigSecretEnumerator } from '@backstage/backend-defaults/rootConfig';
import { WinstonLogger } from '@backstage/backend-defaults/rootLogger';
import { mockServices, startTestBackend } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { loadConfigSchema } from '@backstage/config-loader';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import yaml from 'yaml';
import * as winston from 'winston';
import { serversPlugin } from './plugin';

jest.setTimeout(60_000);

const TOKEN = 'eyJhbGciOiJSUzI1NiJ9.rackside-test-token-4c1f9e';
const PREFLIGHT_SECRET = 'preflight-secret-7d2a51c0';

const data = {
  servers: {
    clusters: [
      {
        name: 'plant-a',
        // Nothing listens here: the cluster stays unavailable, which is logged.
        url: 'https://127.0.0.1:1',
        skipTLSVerify: true,
        serviceAccountToken: TOKEN,
      },
    ],
    preflight: { secret: PREFLIGHT_SECRET },
  },
};

describe('config schema', () => {
  it('validates the servers block the plugin reads, and the demo app-config', async () => {
    const schema = await loadConfigSchema({
      dependencies: ['@rackside/plugin-servers-backend'],
    });
    const appConfig = yaml.parse(
      fs.readFileSync(
        path.resolve(__dirname, '../../../app-config.yaml'),
        'utf8',
      ),
    );
    const configs = [
      { data: appConfig, context: 'app-config.yaml' },
      { data, context: 'test' },
    ];
    expect(() => schema.process(configs)).not.toThrow();
    const [, secrets] = schema.process(configs, { visibility: ['secret'] });
    expect(JSON.stringify(secrets.data)).toContain(TOKEN);
    expect(JSON.stringify(secrets.data)).toContain(PREFLIGHT_SECRET);
    // A wrong type is refused (Backstage checks the schema at start-up).
    expect(() =>
      schema.process([
        configs[0],
        {
          data: { servers: { reasonPolicy: { minLength: 'ten' } } },
          context: 'test',
        },
      ]),
    ).toThrow(/must be number .* at \/servers\/reasonPolicy\/minLength/);
  });

  it('describes servers.approvals.rules (docs/approvals.md), and refuses a wrong type', async () => {
    const schema = await loadConfigSchema({
      dependencies: ['@rackside/plugin-servers-backend'],
    });
    const appConfig = {
      data: yaml.parse(
        fs.readFileSync(
          path.resolve(__dirname, '../../../app-config.yaml'),
          'utf8',
        ),
      ),
      context: 'app-config.yaml',
    };
    const approvals = {
      rules: [
        {
          name: 'last-margin',
          select: {
            actions: ['reboot', 'shutdown', 'plan'],
            intents: ['reboot'],
            rungAtLeast: 'hazard',
            nodeLabels: { 'rackside.dev/storage': 'true' },
            roles: ['control-plane'],
            planSizeAtLeast: 40,
          },
          approvers: ['group:default/platform-oncall', 'user:default/alice'],
          expiresAfterMinutes: 120,
        },
      ],
    };
    expect(() =>
      schema.process([
        appConfig,
        { data: { servers: { approvals } }, context: 'test' },
      ]),
    ).not.toThrow();
    expect(() =>
      schema.process([
        appConfig,
        {
          data: {
            servers: {
              approvals: {
                rules: [
                  { ...approvals.rules[0], select: { rungAtLeast: 'refused' } },
                ],
              },
            },
          },
          context: 'test',
        },
      ]),
    ).toThrow(/rungAtLeast/);
    expect(() =>
      schema.process([
        appConfig,
        {
          data: {
            servers: { approvals: { rules: [{ name: 'no-approvers' }] } },
          },
          context: 'test',
        },
      ]),
    ).toThrow(/approvers/);
  });

  it('stops the backend at start-up on a rule it cannot read, naming the rule and the field', async () => {
    await expect(
      startTestBackend({
        features: [
          serversPlugin,
          mockServices.rootConfig.factory({
            data: {
              servers: {
                approvals: {
                  rules: [
                    {
                      name: 'storage',
                      select: { actions: ['reboot', 'explode'] },
                      approvers: ['group:default/storage'],
                    },
                  ],
                },
              },
            },
          }),
        ],
      }),
    ).rejects.toThrow(
      /servers\.approvals\.rules\[0\] \(storage\)\.select\.actions must each be one of/,
    );
  });

  it('keeps the cluster token and the pre-flight secret out of the backend log', async () => {
    let written = '';
    const stream = new Writable({
      write(chunk, _encoding, done) {
        written += chunk.toString();
        done();
      },
    });
    const rootLogger = WinstonLogger.create({
      meta: { service: 'backstage' },
      level: 'debug',
      format: winston.format.json(),
      transports: [new winston.transports.Stream({ stream })],
    });
    // As rootLoggerServiceFactory does: the secrets of every schema in the workspace.
    const enumerate = await createConfigSecretEnumerator({
      logger: rootLogger,
    });
    rootLogger.addRedactions(enumerate(new ConfigReader(data)));

    // Something that logs the whole servers block, as a careless error message would.
    const leaky = createBackendModule({
      pluginId: 'servers',
      moduleId: 'leaky-test',
      register(reg) {
        reg.registerInit({
          deps: {
            config: coreServices.rootConfig,
            logger: coreServices.logger,
          },
          async init({ config, logger }) {
            logger.info(
              `servers config: ${JSON.stringify(config.get('servers'))}`,
            );
            logger.warn('cluster access failed', {
              token: config
                .getConfigArray('servers.clusters')[0]
                .getString('serviceAccountToken'),
            });
          },
        });
      },
    });
    const backend = await startTestBackend({
      features: [
        serversPlugin,
        leaky,
        mockServices.rootConfig.factory({ data }),
        createServiceFactory({
          service: coreServices.rootLogger,
          deps: {},
          factory: () => rootLogger,
        }),
      ],
    });
    await backend.stop();
    expect(written).toContain('servers config');
    expect(written).toContain('***');
    expect(written).not.toContain(TOKEN);
    expect(written).not.toContain(PREFLIGHT_SECRET);
  });
});
