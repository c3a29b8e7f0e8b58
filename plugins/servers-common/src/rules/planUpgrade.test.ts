import {
  alreadyAtTarget,
  firmwareAlreadyAtTarget,
  planFirmwareTarget,
  planUpgradeSummary,
  planUpgradeTarget,
} from './planUpgrade';

const IMAGE = 'factory.talos.dev/installer/abc:v1.12.0';
const spec = { intent: 'upgrade', upgrade: { image: IMAGE } };

describe('planUpgradeTarget', () => {
  it("is the image's tag for an upgrade plan", () => {
    expect(planUpgradeTarget(spec)).toBe('v1.12.0');
  });

  it('is undefined for another intent, or an image without a version', () => {
    expect(planUpgradeTarget({ intent: 'reboot' })).toBeUndefined();
    expect(
      planUpgradeTarget({ intent: 'reboot', upgrade: { image: IMAGE } }),
    ).toBeUndefined();
    expect(
      planUpgradeTarget({
        intent: 'upgrade',
        upgrade: { image: 'factory.talos.dev/installer/abc:latest' },
      }),
    ).toBeUndefined();
  });
});

describe('alreadyAtTarget', () => {
  it('names the target when the osImage names it exactly', () => {
    expect(alreadyAtTarget('v1.12.0', 'Talos (v1.12.0)')).toBe(
      'already at v1.12.0',
    );
  });

  it('does not skip a node whose osImage only looks like the target', () => {
    for (const osImage of [
      'Talos (v1.12.0-beta.0)',
      'Talos (v1.12.00)',
      'Talos (v1.12.0) ',
      'Ubuntu (v1.12.0)',
      'Talos (v1.11.3)',
      'v1.12.0',
      '',
      undefined,
    ]) {
      expect(alreadyAtTarget('v1.12.0', osImage)).toBeUndefined();
    }
  });

  it('skips nothing without a target', () => {
    expect(alreadyAtTarget(undefined, 'Talos (v1.12.0)')).toBeUndefined();
  });
});

describe('planUpgradeSummary', () => {
  it('counts the nodes seen on the target, not the Done steps', () => {
    const summary = planUpgradeSummary(spec, [
      { talosVersion: { before: 'v1.11.3', after: 'v1.12.0' } },
      // Done, but came back on the old version: not counted.
      { talosVersion: { before: 'v1.11.3', after: 'v1.11.3' } },
      // Skipped up front: it already ran the target.
      { talosVersion: { before: 'v1.12.0', after: 'v1.12.0' } },
      { talosVersion: { before: 'v1.11.3' } },
      {},
    ]);
    expect(summary).toEqual({
      target: 'v1.12.0',
      atTarget: 2,
      total: 5,
      text: '2 of 5 at v1.12.0',
    });
  });

  it('is undefined for a plan that installs no version', () => {
    expect(planUpgradeSummary({ intent: 'reboot' }, [{}])).toBeUndefined();
  });
});

describe('a firmware plan with a version', () => {
  const BIOS = '/redfish/v1/UpdateService/FirmwareInventory/BIOS';
  const firmwarePlan = {
    intent: 'firmware',
    firmware: { version: '2.5.0', targets: [BIOS] },
  };

  it('installs spec.firmware.version; without one, nothing', () => {
    expect(planFirmwareTarget(firmwarePlan)).toBe('2.5.0');
    expect(planFirmwareTarget({ intent: 'firmware', firmware: {} })).toBe(
      undefined,
    );
    expect(planFirmwareTarget({ ...firmwarePlan, intent: 'reboot' })).toBe(
      undefined,
    );
    // A Talos plan's target is never a firmware version.
    expect(planUpgradeTarget(firmwarePlan)).toBeUndefined();
  });

  it('skips a node whose last health reading reports the version for the targets', () => {
    expect(
      firmwareAlreadyAtTarget(firmwarePlan, [
        { id: BIOS, name: 'Rack BIOS', version: '2.5.0' },
      ]),
    ).toBe('already at 2.5.0');
    expect(
      firmwareAlreadyAtTarget(firmwarePlan, [
        { id: BIOS, name: 'Rack BIOS', version: '2.4.1' },
      ]),
    ).toBeUndefined();
    expect(firmwareAlreadyAtTarget(firmwarePlan, undefined)).toBeUndefined();
  });

  it('counts the steps whose firmware reached the version: N of M at 2.5.0', () => {
    expect(
      planUpgradeSummary(firmwarePlan, [
        { firmwareVersion: { before: '2.4.1', after: '2.5.0' } },
        { firmwareVersion: { before: '2.5.0', after: '2.5.0' } },
        { firmwareVersion: { before: '2.4.1' } },
        // A Talos version is not a firmware version.
        { talosVersion: { after: '2.5.0' } },
      ]),
    ).toEqual({
      target: '2.5.0',
      atTarget: 2,
      total: 4,
      text: '2 of 4 at 2.5.0',
    });
  });
});
