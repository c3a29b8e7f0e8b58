import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { ConfigReader } from '@backstage/config';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import {
  serverActionPermissions,
  serversReadPermission,
} from '@rackside/plugin-servers-common';
import { readServersPolicyConfig } from './config';
import { ServersPermissionPolicy } from './policy';

const catalogRead = {
  type: 'basic' as const,
  name: 'catalog.entity.read',
  attributes: { action: 'read' as const },
};

function policy(otherPermissions: 'allow' | 'deny') {
  return new ServersPermissionPolicy(
    readServersPolicyConfig(
      new ConfigReader({
        permission: {
          rackside: {
            otherPermissions,
            tiers: { read: ['group:default/viewers'] },
            principals: [
              { ref: 'user:default/lee', allow: ['servers:cordon'] },
            ],
          },
        },
      }),
    ),
    {
      groupsOf: async ref =>
        ref === 'user:default/vic' ? ['group:default/viewers'] : [],
    },
  );
}

const asUser = (ref: string) => ({
  credentials: mockCredentials.user(ref),
  info: { userEntityRef: ref, ownershipEntityRefs: [ref] },
});

describe('ServersPermissionPolicy', () => {
  it('decides Rackside permissions from the user and its catalog groups', async () => {
    const p = policy('deny');
    await expect(
      p.handle(
        { permission: serversReadPermission },
        asUser('user:default/vic'),
      ),
    ).resolves.toEqual({ result: AuthorizeResult.ALLOW });
    await expect(
      p.handle(
        { permission: serversReadPermission },
        asUser('user:default/lee'),
      ),
    ).resolves.toEqual({ result: AuthorizeResult.DENY });
    await expect(
      p.handle(
        { permission: serverActionPermissions.cordon },
        asUser('User:default/Lee'),
      ),
    ).resolves.toEqual({ result: AuthorizeResult.ALLOW });
  });

  it('denies Rackside permissions without a user', async () => {
    await expect(
      policy('allow').handle({ permission: serversReadPermission }),
    ).resolves.toEqual({ result: AuthorizeResult.DENY });
  });

  it.each(['allow', 'deny'] as const)(
    'answers %s for permissions that are not Rackside’s',
    async setting => {
      await expect(
        policy(setting).handle(
          { permission: catalogRead },
          asUser('user:default/vic'),
        ),
      ).resolves.toEqual({
        result:
          setting === 'allow' ? AuthorizeResult.ALLOW : AuthorizeResult.DENY,
      });
    },
  );

  describe('when the catalog cannot say which groups a user is in', () => {
    function failClosed() {
      const logger = mockServices.logger.mock();
      const p = new ServersPermissionPolicy(
        readServersPolicyConfig(
          new ConfigReader({
            permission: {
              rackside: {
                principals: [
                  {
                    ref: 'user:default/lee',
                    allow: ['servers:cordon', 'servers:uncordon'],
                  },
                  {
                    ref: 'group:default/contractors',
                    deny: ['servers:cordon'],
                  },
                  {
                    ref: 'group:default/night-shift',
                    deny: [
                      {
                        permission: 'servers:uncordon',
                        conditions: { rule: 'IS_CONTROL_PLANE' },
                      },
                    ],
                  },
                ],
              },
            },
          }),
        ),
        {
          groupsOf: async ref => {
            throw new Error(`could not read the groups of ${ref}: timeout`);
          },
        },
        logger,
      );
      return { p, logger };
    }

    it('denies, and logs, an action a group deny line could deny', async () => {
      const { p, logger } = failClosed();
      // lee may be a contractor: the unconditional group deny could apply.
      await expect(
        p.handle(
          { permission: serverActionPermissions.cordon },
          asUser('user:default/lee'),
        ),
      ).resolves.toEqual({ result: AuthorizeResult.DENY });
      // A conditional group deny line could apply as well.
      await expect(
        p.handle(
          { permission: serverActionPermissions.uncordon },
          asUser('user:default/lee'),
        ),
      ).resolves.toEqual({ result: AuthorizeResult.DENY });
      expect(logger.warn).toHaveBeenCalledWith(
        expect.stringMatching(
          /denied servers:cordon to user:default\/lee: a group deny line could deny it.*timeout/,
        ),
      );
    });

    it('decides on the user’s own grants what no group deny line names', async () => {
      const { p } = failClosed();
      const lee = new ServersPermissionPolicy(
        readServersPolicyConfig(
          new ConfigReader({
            permission: {
              rackside: {
                principals: [
                  { ref: 'user:default/lee', allow: ['servers:drain'] },
                  {
                    ref: 'group:default/contractors',
                    deny: ['servers:cordon'],
                  },
                ],
              },
            },
          }),
        ),
        {
          groupsOf: async () => {
            throw new Error('catalog down');
          },
        },
        mockServices.logger.mock(),
      );
      await expect(
        lee.handle(
          { permission: serverActionPermissions.drain },
          asUser('user:default/lee'),
        ),
      ).resolves.toEqual({ result: AuthorizeResult.ALLOW });
      await expect(
        p.handle(
          { permission: serversReadPermission },
          asUser('user:default/lee'),
        ),
      ).resolves.toEqual({ result: AuthorizeResult.DENY });
    });
  });
});
