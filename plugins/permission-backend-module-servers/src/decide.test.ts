import { ConfigReader } from '@backstage/config';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  machinesAddPermission,
  machinesReadPermission,
  machinesReclaimPermission,
  serverActionPermissions,
  serversApprovePermission,
  serversPermissions,
  serversFirmwarePermission,
  serversRebootPermission,
  serversUpgradePermission,
  serversReadPermission,
} from '@rackside/plugin-servers-common';
import {
  createServerConditionalDecision,
  serverConditions,
} from '@rackside/plugin-servers-node';
import { readServersPolicyConfig } from './config';
import { decideServersPermission, isRacksidePermission } from './decide';

const config = readServersPolicyConfig(
  new ConfigReader({
    permission: {
      rackside: {
        tiers: {
          read: ['group:default/viewers'],
          'operate-lead': ['group:default/leads'],
          admin: ['group:default/admins'],
        },
        principals: [
          {
            ref: 'group:default/leads',
            allow: [
              'servers:uncordon',
              {
                permission: 'servers:cordon',
                conditions: { not: { rule: 'IS_CONTROL_PLANE' } },
              },
            ],
          },
          {
            ref: 'group:default/plant-b',
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
          {
            ref: 'user:default/mallory',
            deny: ['servers:read', 'servers:cordon'],
          },
          {
            ref: 'group:default/no-virtual',
            deny: [
              {
                permission: 'servers:reboot',
                conditions: { rule: 'IS_VIRTUAL' },
              },
            ],
          },
        ],
      },
    },
  }),
);

const decide = (permission: any, ...principals: string[]) =>
  decideServersPermission(permission, principals, config);

const notControlPlane = {
  not: { rule: 'IS_CONTROL_PLANE', resourceType: 'server', params: {} },
};
const inPlantB = {
  rule: 'IS_IN_CLUSTER',
  resourceType: 'server',
  params: { clusters: ['plant-b'] },
};
const conditional = (_permission: { name: string }, conditions: unknown) => ({
  result: AuthorizeResult.CONDITIONAL,
  pluginId: 'servers',
  resourceType: 'server',
  conditions,
});

const ALLOW = { result: AuthorizeResult.ALLOW };
const DENY = { result: AuthorizeResult.DENY };
const actions = Object.values(serverActionPermissions);

describe('decideServersPermission', () => {
  it('knows Rackside permissions by name', () => {
    expect(serversPermissions.every(isRacksidePermission)).toBe(true);
    expect(
      isRacksidePermission({
        type: 'basic',
        name: 'catalog.entity.read',
        attributes: {},
      }),
    ).toBe(false);
  });

  it('denies everything to a principal without tier or lines', () => {
    for (const permission of serversPermissions) {
      expect(decide(permission, 'user:default/nobody')).toEqual(DENY);
    }
  });

  it('read tier: reading only', () => {
    const p = ['user:default/vic', 'group:default/viewers'];
    expect(decide(serversReadPermission, ...p)).toEqual(ALLOW);
    expect(decide(machinesReadPermission, ...p)).toEqual(ALLOW);
    for (const permission of [
      ...actions,
      machinesAddPermission,
      machinesReclaimPermission,
    ]) {
      expect([permission.name, decide(permission, ...p)]).toEqual([
        permission.name,
        DENY,
      ]);
    }
  });

  it('operate-lead tier: reading by tier, the rest only through its allow lines', () => {
    const p = ['user:default/lee', 'group:default/leads'];
    expect(decide(serversReadPermission, ...p)).toEqual(ALLOW);
    expect(decide(serverActionPermissions.uncordon, ...p)).toEqual(ALLOW);
    expect(decide(serverActionPermissions.cordon, ...p)).toEqual(
      conditional(serverActionPermissions.cordon, notControlPlane),
    );
    for (const action of [
      'drain',
      'reboot',
      'shutdown',
      'power-on',
      'maintenance-abandon',
    ] as const) {
      expect([action, decide(serverActionPermissions[action], ...p)]).toEqual([
        action,
        DENY,
      ]);
    }
    expect(decide(machinesAddPermission, ...p)).toEqual(DENY);
    expect(decide(machinesReclaimPermission, ...p)).toEqual(DENY);
  });

  it('admin tier: every Rackside permission', () => {
    for (const permission of serversPermissions) {
      expect([
        permission.name,
        decide(permission, 'group:default/admins'),
      ]).toEqual([permission.name, ALLOW]);
    }
  });

  it('an unconditional grant beats a conditional one', () => {
    expect(
      decide(
        serverActionPermissions.cordon,
        'group:default/leads',
        'group:default/admins',
      ),
    ).toEqual(ALLOW);
  });

  it('conditional allow lines of several groups are alternatives', () => {
    expect(
      decide(
        serverActionPermissions.cordon,
        'group:default/leads',
        'group:default/plant-b',
      ),
    ).toEqual(
      conditional(serverActionPermissions.cordon, {
        anyOf: [notControlPlane, inPlantB],
      }),
    );
  });

  it('a deny line wins over the admin tier and over allow lines', () => {
    const p = [
      'user:default/mallory',
      'group:default/admins',
      'group:default/leads',
    ];
    expect(decide(serversReadPermission, ...p)).toEqual(DENY);
    expect(decide(serverActionPermissions.cordon, ...p)).toEqual(DENY);
    expect(decide(serverActionPermissions.uncordon, ...p)).toEqual(ALLOW);
  });

  it('a conditional deny line narrows the grant', () => {
    expect(
      decide(
        serverActionPermissions.reboot,
        'group:default/admins',
        'group:default/no-virtual',
      ),
    ).toEqual(
      conditional(serverActionPermissions.reboot, {
        not: { rule: 'IS_VIRTUAL', resourceType: 'server', params: {} },
      }),
    );
    expect(
      decide(serverActionPermissions.reboot, 'group:default/no-virtual'),
    ).toEqual(DENY);
  });

  it('combines a conditional grant with a conditional deny', () => {
    const withDeny = readServersPolicyConfig(
      new ConfigReader({
        permission: {
          rackside: {
            principals: [
              {
                ref: 'user:default/lee',
                allow: [
                  {
                    permission: 'servers:cordon',
                    conditions: {
                      rule: 'IS_IN_CLUSTER',
                      params: { clusters: ['plant-b'] },
                    },
                  },
                ],
                deny: [
                  {
                    permission: 'servers:cordon',
                    conditions: { rule: 'IS_CONTROL_PLANE' },
                  },
                ],
              },
            ],
          },
        },
      }),
    );
    expect(
      decideServersPermission(
        serverActionPermissions.cordon,
        ['user:default/lee'],
        withDeny,
      ),
    ).toEqual(
      conditional(serverActionPermissions.cordon, {
        allOf: [
          inPlantB,
          {
            not: {
              rule: 'IS_CONTROL_PLANE',
              resourceType: 'server',
              params: {},
            },
          },
        ],
      }),
    );
  });

  it('gives the decisions a policy written in code with the condition exports gives', () => {
    const { cordon } = serverActionPermissions;
    expect(decide(cordon, 'group:default/leads')).toEqual(
      createServerConditionalDecision(cordon, {
        not: serverConditions.isControlPlane({}),
      }),
    );
    expect(
      decide(cordon, 'group:default/leads', 'group:default/plant-b'),
    ).toEqual(
      createServerConditionalDecision(cordon, {
        anyOf: [
          { not: serverConditions.isControlPlane({}) },
          serverConditions.isInCluster({ clusters: ['plant-b'] }),
        ],
      }),
    );
  });

  it('refuses to decide a permission that is not Rackside’s', () => {
    expect(() =>
      decide(
        { type: 'basic', name: 'catalog.entity.read', attributes: {} },
        'user:default/a',
      ),
    ).toThrow(/not a Rackside permission/);
  });
});

describe('servers:approve', () => {
  const approveConfig = readServersPolicyConfig(
    new ConfigReader({
      permission: {
        rackside: {
          tiers: {
            'operate-lead': ['group:default/leads'],
            admin: ['group:default/admins'],
          },
          principals: [
            {
              ref: 'group:default/oncall',
              allow: [
                {
                  permission: 'servers:approve',
                  conditions: {
                    rule: 'HAS_LABEL',
                    params: { label: 'rackside.dev/team', value: 'storage' },
                  },
                },
              ],
            },
            {
              ref: 'group:default/no-cp-approvals',
              deny: [
                {
                  permission: 'servers:approve',
                  conditions: { rule: 'IS_CONTROL_PLANE' },
                },
              ],
            },
          ],
        },
      },
    }),
  );
  const decideApprove = (...principals: string[]) =>
    decideServersPermission(
      serversApprovePermission,
      principals,
      approveConfig,
    );

  it('is a server permission at the admin tier by default, like the verbs', () => {
    expect(serversApprovePermission.name).toBe('servers:approve');
    expect(isRacksidePermission(serversApprovePermission)).toBe(true);
    expect(decideApprove('group:default/admins')).toEqual(ALLOW);
    expect(decideApprove('group:default/leads')).toEqual(DENY);
    expect(decideApprove('user:default/nobody')).toEqual(DENY);
  });

  it('takes conditional allow and deny lines over the server rules', () => {
    const onStorage = {
      rule: 'HAS_LABEL',
      resourceType: 'server',
      params: { label: 'rackside.dev/team', value: 'storage' },
    };
    expect(decideApprove('group:default/oncall')).toEqual(
      conditional(serversApprovePermission, onStorage),
    );
    expect(
      decideApprove('group:default/admins', 'group:default/no-cp-approvals'),
    ).toEqual(
      conditional(serversApprovePermission, {
        not: { rule: 'IS_CONTROL_PLANE', resourceType: 'server', params: {} },
      }),
    );
  });
});

describe('servers:upgrade', () => {
  const upgradeConfig = readServersPolicyConfig(
    new ConfigReader({
      permission: {
        rackside: {
          tiers: { admin: ['group:default/admins'] },
          principals: [
            {
              ref: 'group:default/rebooters',
              allow: [{ permission: 'servers:reboot' }],
            },
            {
              ref: 'group:default/control-plane-team',
              allow: [
                {
                  permission: 'servers:upgrade',
                  conditions: { rule: 'IS_CONTROL_PLANE' },
                },
              ],
            },
          ],
        },
      },
    }),
  );
  const decideUpgrade = (
    permission: typeof serversUpgradePermission,
    ...principals: string[]
  ) => decideServersPermission(permission, principals, upgradeConfig);

  it('is a server permission at the admin tier by default, apart from servers:reboot', () => {
    expect(serversUpgradePermission.name).toBe('servers:upgrade');
    expect(serversUpgradePermission.resourceType).toBe('server');
    expect(isRacksidePermission(serversUpgradePermission)).toBe(true);
    expect(
      decideUpgrade(serversUpgradePermission, 'group:default/admins'),
    ).toEqual(ALLOW);
    // Allowed to reboot is not allowed to change what runs on the machine.
    expect(
      decideUpgrade(serversRebootPermission, 'group:default/rebooters'),
    ).toEqual(ALLOW);
    expect(
      decideUpgrade(serversUpgradePermission, 'group:default/rebooters'),
    ).toEqual(DENY);
  });

  it('takes a conditional allow line over the server rules', () => {
    expect(
      decideUpgrade(
        serversUpgradePermission,
        'group:default/control-plane-team',
      ),
    ).toEqual(
      conditional(serversUpgradePermission, {
        rule: 'IS_CONTROL_PLANE',
        resourceType: 'server',
        params: {},
      }),
    );
  });
});

describe('servers:firmware', () => {
  const firmwareConfig = readServersPolicyConfig(
    new ConfigReader({
      permission: {
        rackside: {
          tiers: { admin: ['group:default/admins'] },
          principals: [
            {
              ref: 'group:default/os-upgraders',
              allow: [{ permission: 'servers:upgrade' }],
            },
            {
              ref: 'group:default/hardware-team',
              allow: [
                {
                  permission: 'servers:firmware',
                  conditions: {
                    not: { rule: 'IS_CONTROL_PLANE' },
                  },
                },
              ],
            },
            {
              ref: 'user:default/contractor',
              deny: ['servers:firmware'],
            },
          ],
        },
      },
    }),
  );
  const decideFirmware = (
    permission: typeof serversFirmwarePermission,
    ...principals: string[]
  ) => decideServersPermission(permission, principals, firmwareConfig);

  it('is a server permission at the admin tier by default, apart from servers:upgrade', () => {
    expect(serversFirmwarePermission.name).toBe('servers:firmware');
    expect(serversFirmwarePermission.resourceType).toBe('server');
    expect(isRacksidePermission(serversFirmwarePermission)).toBe(true);
    expect(
      decideFirmware(serversFirmwarePermission, 'group:default/admins'),
    ).toEqual(ALLOW);
    // Allowed to change the Talos version is not allowed to flash a BIOS.
    expect(
      decideFirmware(serversUpgradePermission, 'group:default/os-upgraders'),
    ).toEqual(ALLOW);
    expect(
      decideFirmware(serversFirmwarePermission, 'group:default/os-upgraders'),
    ).toEqual(DENY);
  });

  it('takes conditional allow lines and deny lines over the server rules', () => {
    expect(
      decideFirmware(serversFirmwarePermission, 'group:default/hardware-team'),
    ).toEqual(
      conditional(serversFirmwarePermission, {
        not: { rule: 'IS_CONTROL_PLANE', resourceType: 'server', params: {} },
      }),
    );
    // A deny line wins over the admin tier.
    expect(
      decideFirmware(
        serversFirmwarePermission,
        'group:default/admins',
        'user:default/contractor',
      ),
    ).toEqual(DENY);
  });
});
