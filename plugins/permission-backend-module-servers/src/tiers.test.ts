import { DEFAULT_TIERS, highestTier, tierHolds } from './tiers';

describe('tiers', () => {
  it('puts reading at read and every action at admin by default', () => {
    expect(DEFAULT_TIERS['servers:read']).toBe('read');
    expect(DEFAULT_TIERS['machines:read']).toBe('read');
    for (const name of [
      'servers:cordon',
      'servers:uncordon',
      'servers:drain',
      'servers:reboot',
      'servers:shutdown',
      'servers:power-on',
      'servers:maintenance-abandon',
      'servers:plan',
      'servers:drain-data',
      'servers:approve',
      'servers:upgrade',
      'servers:firmware',
      'machines:add',
      'machines:reclaim',
    ]) {
      expect(DEFAULT_TIERS[name]).toBe('admin');
    }
    expect(Object.keys(DEFAULT_TIERS)).toHaveLength(16);
  });

  it('lets a higher tier hold a lower one, never the reverse', () => {
    expect(tierHolds('admin', 'read')).toBe(true);
    expect(tierHolds('operate-lead', 'operate-lead')).toBe(true);
    expect(tierHolds('read', 'operate-lead')).toBe(false);
    expect(tierHolds('operate-lead', 'admin')).toBe(false);
  });

  it('picks the highest tier of several', () => {
    expect(highestTier(['read', 'admin', 'operate-lead'])).toBe('admin');
    expect(highestTier([])).toBeUndefined();
  });
});
