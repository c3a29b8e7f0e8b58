import { ConfigReader } from '@backstage/config';
import { readServersPolicyConfig } from './config';

const read = (rackside: any) =>
  readServersPolicyConfig(
    new ConfigReader({ permission: { enabled: true, rackside } }),
  );

describe('readServersPolicyConfig', () => {
  it('defaults to no grants and denying other permissions', () => {
    expect(readServersPolicyConfig(new ConfigReader({}))).toEqual({
      tiers: { read: [], 'operate-lead': [], admin: [] },
      principals: [],
      otherPermissions: 'deny',
      groupCacheSeconds: 30,
    });
  });

  it('normalises refs and turns conditions into server criteria', () => {
    const parsed = read({
      tiers: { read: ['group:Plant-Viewers'], admin: ['user:default/ada'] },
      principals: [
        {
          ref: 'group:default/plant-engineers',
          allow: [
            'servers:uncordon',
            {
              permission: 'servers:cordon',
              conditions: {
                allOf: [
                  { not: { rule: 'IS_CONTROL_PLANE' } },
                  { rule: 'IS_IN_CLUSTER', params: { clusters: ['plant-a'] } },
                ],
              },
            },
          ],
          deny: ['servers:drain'],
        },
      ],
      otherPermissions: 'allow',
      groupCacheSeconds: 0,
    });
    expect(parsed.tiers.read).toEqual(['group:default/plant-viewers']);
    expect(parsed.tiers.admin).toEqual(['user:default/ada']);
    expect(parsed.otherPermissions).toBe('allow');
    expect(parsed.groupCacheSeconds).toBe(0);
    expect(parsed.principals).toEqual([
      {
        ref: 'group:default/plant-engineers',
        allow: [
          { permission: 'servers:uncordon' },
          {
            permission: 'servers:cordon',
            conditions: {
              allOf: [
                {
                  not: {
                    rule: 'IS_CONTROL_PLANE',
                    resourceType: 'server',
                    params: {},
                  },
                },
                {
                  rule: 'IS_IN_CLUSTER',
                  resourceType: 'server',
                  params: { clusters: ['plant-a'] },
                },
              ],
            },
          },
        ],
        deny: [{ permission: 'servers:drain' }],
      },
    ]);
  });

  it.each([
    [{ tier: {} }, /permission\.rackside\.tier: unknown key/],
    [
      { tiers: { operator: ['user:a'] } },
      /permission\.rackside\.tiers\.operator: unknown key/,
    ],
    [
      { tiers: { admin: ['component:default/x'] } },
      /tiers\.admin\[0\]: .*must be a user or group/,
    ],
    [{ tiers: { admin: [':'] } }, /tiers\.admin\[0\]: .*not an entity ref/],
    [
      { principals: [{ ref: 'user:ada', allow: ['servers:cordn'] }] },
      /principals\[0\]\.allow\[0\]: unknown permission "servers:cordn"/,
    ],
    [
      { principals: [{ ref: 'user:ada', alow: ['servers:cordon'] }] },
      /principals\[0\]\.alow: unknown key/,
    ],
    [
      { principals: [{ ref: 'user:ada' }] },
      /principals\[0\]: user:default\/ada has neither allow nor deny/,
    ],
    [
      {
        principals: [
          { ref: 'user:ada', deny: ['servers:cordon'] },
          { ref: 'User:default/Ada', deny: ['servers:drain'] },
        ],
      },
      /principals\[1\]\.ref: user:default\/ada is listed twice/,
    ],
    [
      {
        principals: [
          {
            ref: 'user:ada',
            allow: [
              { permission: 'servers:cordon', conditions: { rule: 'IS_RED' } },
            ],
          },
        ],
      },
      /principals\[0\]\.allow\[0\]\.conditions\.rule: unknown rule "IS_RED"; known rules: IS_CONTROL_PLANE/,
    ],
    [
      {
        principals: [
          {
            ref: 'user:ada',
            allow: [
              {
                permission: 'servers:cordon',
                conditions: {
                  not: {
                    rule: 'IS_IN_CLUSTER',
                    params: { clusters: 'plant-a' },
                  },
                },
              },
            ],
          },
        ],
      },
      /allow\[0\]\.conditions\.not\.params: invalid parameters for IS_IN_CLUSTER: clusters/,
    ],
    [
      {
        principals: [
          {
            ref: 'user:ada',
            allow: [
              {
                permission: 'machines:add',
                conditions: { rule: 'IS_VIRTUAL' },
              },
            ],
          },
        ],
      },
      /allow\[0\]\.conditions: machines:add is not checked against a server/,
    ],
    [
      {
        principals: [
          {
            ref: 'user:ada',
            allow: [
              { permission: 'servers:cordon', conditions: { anyOf: [] } },
            ],
          },
        ],
      },
      /conditions\.anyOf: must be a non-empty list/,
    ],
    [
      {
        principals: [
          {
            ref: 'user:ada',
            allow: [
              {
                permission: 'servers:cordon',
                conditions: {
                  not: { rule: 'IS_VIRTUAL' },
                  anyOf: [{ rule: 'IS_VIRTUAL' }],
                },
              },
            ],
          },
        ],
      },
      /conditions: expected exactly one of rule, allOf, anyOf, not/,
    ],
    [
      {
        principals: [
          {
            ref: 'user:ada',
            allow: [{ permission: 'servers:cordon', when: {} }],
          },
        ],
      },
      /allow\[0\]\.when: unknown key/,
    ],
    // A misspelt parameter must not be dropped: HAS_LABEL without its value
    // would match every value of the label, widening an allow line.
    [
      {
        principals: [
          {
            ref: 'user:ada',
            allow: [
              {
                permission: 'servers:cordon',
                conditions: {
                  rule: 'HAS_LABEL',
                  params: { label: 'zone', vaule: 'hall-1' },
                },
              },
            ],
          },
        ],
      },
      /principals\[0\]\.allow\[0\]\.conditions\.params\.vaule: unknown parameter of HAS_LABEL; expected label, value/,
    ],
    [
      {
        principals: [
          {
            ref: 'user:ada',
            deny: [
              {
                permission: 'servers:shutdown',
                conditions: {
                  anyOf: [
                    { rule: 'IS_VIRTUAL' },
                    { rule: 'IS_CONTROL_PLANE', params: { only: true } },
                  ],
                },
              },
            ],
          },
        ],
      },
      /deny\[0\]\.conditions\.anyOf\[1\]\.params\.only: unknown parameter of IS_CONTROL_PLANE; it takes none/,
    ],
    [
      {
        principals: [
          {
            ref: 'user:ada',
            allow: [
              {
                permission: 'servers:cordon',
                conditions: { rule: 'HAS_LABEL', params: 'zone' },
              },
            ],
          },
        ],
      },
      /allow\[0\]\.conditions\.params: must be an object/,
    ],
    [{ otherPermissions: 'maybe' }, /otherPermissions: must be allow or deny/],
    [{ groupCacheSeconds: -1 }, /groupCacheSeconds: must be zero or more/],
  ])('rejects %j naming the key', (rackside, message) => {
    expect(() => read(rackside)).toThrow(message);
  });
});
