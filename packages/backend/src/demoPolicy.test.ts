import {
  AuthorizeResult,
  createPermission,
} from '@backstage/plugin-permission-common';
import { DemoPermissionPolicy } from './demoPolicy';

const serversCordonPermission = createPermission({
  name: 'servers:cordon',
  attributes: { action: 'update' },
});
const serversReadPermission = createPermission({
  name: 'servers:read',
  attributes: { action: 'read' },
});

describe('DemoPermissionPolicy', () => {
  it('allows everything when nothing is denied', async () => {
    const policy = new DemoPermissionPolicy([]);
    await expect(
      policy.handle({ permission: serversCordonPermission }),
    ).resolves.toEqual({ result: AuthorizeResult.ALLOW });
  });

  it('denies exactly the listed permissions', async () => {
    const policy = new DemoPermissionPolicy(['servers:cordon']);
    await expect(
      policy.handle({ permission: serversCordonPermission }),
    ).resolves.toEqual({ result: AuthorizeResult.DENY });
    await expect(
      policy.handle({ permission: serversReadPermission }),
    ).resolves.toEqual({ result: AuthorizeResult.ALLOW });
  });
});
