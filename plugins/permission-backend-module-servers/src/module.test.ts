import {
  coreServices,
  createBackendPlugin,
  createServiceFactory,
  type HttpAuthService,
} from '@backstage/backend-plugin-api';
import {
  mockCredentials,
  mockServices,
  startTestBackend,
} from '@backstage/backend-test-utils';
import type { Entity } from '@backstage/catalog-model';
import { catalogServiceMock } from '@backstage/plugin-catalog-node/testUtils';
import permissionPlugin from '@backstage/plugin-permission-backend';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  serverActionPermissions,
  serversPermissions,
  serversReadPermission,
} from '@rackside/plugin-servers-common';
import {
  parseServerResourceRef,
  serverPermissionResourceRef,
  serverPermissionRules,
  type ServerResource,
} from '@rackside/plugin-servers-node';
import request from 'supertest';
import permissionModuleServersPolicy from '.';

// Stands in for servers-backend: registers the same permissions, resource
// type and rules, over three fixed servers, so the permission backend can
// apply conditional decisions through the plugin's apply-conditions route.
const SERVERS: ServerResource[] = [
  {
    cluster: 'plant-a',
    node: 'cp-1',
    controlPlane: true,
    virtual: false,
    labels: {},
  },
  {
    cluster: 'plant-a',
    node: 'worker-1',
    controlPlane: false,
    virtual: false,
    labels: {},
  },
  {
    cluster: 'plant-b',
    node: 'worker-1',
    controlPlane: false,
    virtual: false,
    labels: {},
  },
];
const fakeServersPlugin = createBackendPlugin({
  pluginId: 'servers',
  register(env) {
    env.registerInit({
      deps: { registry: coreServices.permissionsRegistry },
      async init({ registry }) {
        registry.addResourceType({
          resourceRef: serverPermissionResourceRef,
          permissions: serversPermissions,
          rules: Object.values(serverPermissionRules),
          getResources: async refs =>
            refs.map(ref => {
              const parsed = parseServerResourceRef(ref);
              return SERVERS.find(
                s => s.cluster === parsed?.cluster && s.node === parsed?.node,
              );
            }),
        });
      },
    });
  },
});

// A plugin asks the permission backend on behalf of its user; real tokens of
// that kind carry the plugin as the actor, and the permission backend insists
// on it (direct user calls may not apply conditions). The mock services drop
// the actor, so this httpAuth puts it back for mock on-behalf-of tokens.
const httpAuthWithActors = createServiceFactory({
  service: coreServices.httpAuth,
  deps: { plugin: coreServices.pluginMetadata },
  factory({ plugin }): HttpAuthService {
    const inner = mockServices.httpAuth({ pluginId: plugin.getId() });
    return {
      async credentials(req, options) {
        const credentials: any = await inner.credentials(req, options);
        const onBehalfOf = /^Bearer mock-service-token:/i.test(
          req.headers.authorization ?? '',
        );
        if (onBehalfOf && credentials.principal.type === 'user') {
          return {
            ...credentials,
            principal: {
              ...credentials.principal,
              actor: { subject: 'plugin:servers' },
            },
          };
        }
        return credentials;
      },
      issueUserCookie: (res, options) => inner.issueUserCookie(res, options),
    };
  },
});

/** What the servers backend sends when it checks a permission for a user. */
const onBehalfOf = (user: string) =>
  `Bearer ${mockCredentials.service.token({
    onBehalfOf: mockCredentials.user(`user:default/${user}`),
    targetPluginId: 'permission',
  })}`;

const member = (name: string, groups: string[]): Entity => ({
  apiVersion: 'backstage.io/v1alpha1',
  kind: 'User',
  metadata: { name, namespace: 'default' },
  spec: { memberOf: groups },
  relations: groups.map(g => ({
    type: 'memberOf',
    targetRef: `group:default/${g}`,
  })),
});

const policyConfig = {
  otherPermissions: 'allow',
  tiers: {
    read: ['group:default/plant-viewers'],
    'operate-lead': ['group:default/plant-engineers'],
    admin: ['group:default/plant-admins'],
  },
  principals: [
    {
      ref: 'group:default/plant-engineers',
      allow: [
        'servers:uncordon',
        {
          permission: 'servers:cordon',
          conditions: { not: { rule: 'IS_CONTROL_PLANE' } },
        },
      ],
    },
    {
      ref: 'group:default/plant-b-crew',
      allow: [
        {
          permission: 'servers:cordon',
          conditions: {
            rule: 'IS_IN_CLUSTER',
            params: { clusters: ['plant-b'] },
          },
        },
      ],
    },
    { ref: 'group:default/restricted', deny: ['servers:cordon'] },
  ],
};

async function start(rackside: any = policyConfig) {
  return startTestBackend({
    features: [
      permissionPlugin,
      permissionModuleServersPolicy,
      fakeServersPlugin,
      httpAuthWithActors,
      catalogServiceMock.factory({
        entities: [
          member('vic', ['plant-viewers']),
          member('eve', ['plant-engineers']),
          member('bo', ['plant-viewers', 'plant-b-crew']),
          member('ada', ['plant-admins']),
          member('rex', ['plant-admins', 'restricted']),
        ],
      }),
      mockServices.rootConfig.factory({
        data: { permission: { enabled: true, rackside } },
      }),
    ],
  });
}

type Query = {
  permission: (typeof serversPermissions)[number];
  resourceRef?: string;
};

async function authorize(server: any, user: string, queries: Query[]) {
  const res = await request(server)
    .post('/api/permission/authorize')
    .set('authorization', onBehalfOf(user))
    .send({
      items: queries.map((q, i) => ({ id: String(i), ...q })),
    });
  expect([res.status, res.body.error?.message]).toEqual([200, undefined]);
  return res.body.items.map((item: any) => item.result);
}

const { cordon, uncordon, drain } = serverActionPermissions;
const CP = 'plant-a/cp-1';
const WORKER_A = 'plant-a/worker-1';
const WORKER_B = 'plant-b/worker-1';
const { ALLOW, DENY, CONDITIONAL } = AuthorizeResult;

describe('the app-config policy in the real permission backend', () => {
  it('decides per tier, allow line, condition and deny line', async () => {
    const { server } = await start();
    const check = (user: string) =>
      authorize(server, user, [
        { permission: serversReadPermission, resourceRef: WORKER_A },
        { permission: cordon, resourceRef: CP },
        { permission: cordon, resourceRef: WORKER_A },
        { permission: cordon, resourceRef: WORKER_B },
        { permission: uncordon, resourceRef: WORKER_A },
        { permission: drain, resourceRef: WORKER_A },
      ]);
    //                            read   cordon cp  cordon wA  cordon wB  uncordon drain
    expect(await check('vic')).toEqual([ALLOW, DENY, DENY, DENY, DENY, DENY]);
    expect(await check('eve')).toEqual([
      ALLOW,
      DENY,
      ALLOW,
      ALLOW,
      ALLOW,
      DENY,
    ]);
    expect(await check('bo')).toEqual([ALLOW, DENY, DENY, ALLOW, DENY, DENY]);
    expect(await check('ada')).toEqual([
      ALLOW,
      ALLOW,
      ALLOW,
      ALLOW,
      ALLOW,
      ALLOW,
    ]);
    expect(await check('rex')).toEqual([ALLOW, DENY, DENY, DENY, ALLOW, ALLOW]);
    expect(await check('stranger')).toEqual([
      DENY,
      DENY,
      DENY,
      DENY,
      DENY,
      DENY,
    ]);
  });

  it('returns the conditions themselves when no resource is named', async () => {
    const { server } = await start();
    const res = await request(server)
      .post('/api/permission/authorize')
      .set('authorization', onBehalfOf('eve'))
      .send({ items: [{ id: '1', permission: cordon }] });
    expect(res.body.items[0]).toEqual({
      id: '1',
      result: CONDITIONAL,
      pluginId: 'servers',
      resourceType: 'server',
      conditions: {
        not: { rule: 'IS_CONTROL_PLANE', resourceType: 'server', params: {} },
      },
    });
  });

  it('applies otherPermissions to permissions that are not Rackside’s', async () => {
    const other = {
      type: 'basic',
      name: 'catalog.entity.create',
      attributes: { action: 'create' },
    } as any;
    const allowing = await start();
    expect(
      await authorize(allowing.server, 'vic', [{ permission: other }]),
    ).toEqual([ALLOW]);
    await allowing.stop();
    const denying = await start({ ...policyConfig, otherPermissions: 'deny' });
    expect(
      await authorize(denying.server, 'vic', [{ permission: other }]),
    ).toEqual([DENY]);
  });

  it('refuses to start with a bad key, naming it', async () => {
    await expect(
      start({
        ...policyConfig,
        principals: [{ ref: 'group:default/x', allow: ['servers:reboo'] }],
      }),
    ).rejects.toThrow(
      /permission\.rackside\.principals\[0\]\.allow\[0\]: unknown permission "servers:reboo"/,
    );
  });
});
