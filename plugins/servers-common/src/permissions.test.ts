import {
  isServerAction,
  machinesReclaimPermission,
  SERVER_ACTIONS,
  SERVER_RESOURCE_TYPE,
  serverActionPermissions,
  serversPermissions,
} from './permissions';
import { isResourcePermission } from '@backstage/plugin-permission-common';

describe('permissions', () => {
  it('defines exactly the sixteen names of the product contract', () => {
    expect(serversPermissions.map(p => p.name).sort()).toEqual(
      [
        'machines:add',
        'machines:read',
        'machines:reclaim',
        'servers:approve',
        'servers:cordon',
        'servers:drain',
        'servers:drain-data',
        'servers:firmware',
        'servers:maintenance-abandon',
        'servers:power-on',
        'servers:plan',
        'servers:read',
        'servers:reboot',
        'servers:shutdown',
        'servers:uncordon',
        'servers:upgrade',
      ].sort(),
    );
  });

  it('checks every servers:* permission against the server resource', () => {
    const kinds = serversPermissions.map(p => [
      p.name,
      isResourcePermission(p, SERVER_RESOURCE_TYPE) ? 'server' : p.type,
    ]);
    expect(Object.fromEntries(kinds)).toEqual({
      'servers:read': 'server',
      'servers:cordon': 'server',
      'servers:uncordon': 'server',
      'servers:drain': 'server',
      'servers:reboot': 'server',
      'servers:shutdown': 'server',
      'servers:power-on': 'server',
      'servers:maintenance-abandon': 'server',
      'servers:drain-data': 'server',
      'servers:approve': 'server',
      'servers:upgrade': 'server',
      'servers:firmware': 'server',
      'servers:plan': 'basic',
      'machines:read': 'basic',
      'machines:add': 'basic',
      'machines:reclaim': 'basic',
    });
  });

  it('maps each action route name to the permission of that name', () => {
    for (const action of SERVER_ACTIONS) {
      expect(serverActionPermissions[action].name).toBe(`servers:${action}`);
    }
    expect(isServerAction('drain')).toBe(true);
    // What runs on the machine is changed through the same action route.
    expect(isServerAction('upgrade')).toBe(true);
    expect(isServerAction('firmware')).toBe(true);
    expect(isServerAction('toString')).toBe(false);
    expect(isServerAction('delete')).toBe(false);
    expect(machinesReclaimPermission.name).toBe('machines:reclaim');
  });
});
