import { ConfigReader } from '@backstage/config';
import {
  checkInstallSource,
  MAX_UPGRADE_SOURCES,
  NO_UPGRADE_SOURCES,
  readUpgradeSources,
} from './upgradeSources';

/** ConfigReader's data: JSON, as app-config is. */
type Json = ConstructorParameters<typeof ConfigReader>[0];

const read = (upgrades: Json) =>
  readUpgradeSources(new ConfigReader({ servers: { upgrades } } as Json));

describe('readUpgradeSources', () => {
  it('allows nothing when servers.upgrades is absent', () => {
    expect(readUpgradeSources(new ConfigReader({}))).toEqual(
      NO_UPGRADE_SOURCES,
    );
  });

  it('reads image prefixes and https origins as written', () => {
    expect(
      read({
        talosImages: [
          'factory.talos.dev/installer/',
          'ghcr.io/siderolabs/installer:',
        ],
        firmwareSources: [
          'https://firmware.plant.example',
          'https://10.0.0.5:8443',
        ],
      }),
    ).toEqual({
      talosImages: [
        'factory.talos.dev/installer/',
        'ghcr.io/siderolabs/installer:',
      ],
      firmwareSources: [
        'https://firmware.plant.example',
        'https://10.0.0.5:8443',
      ],
      firmwareChecksumRequired: [],
    });
  });

  it('reads a source written {origin, checksumRequired}', () => {
    expect(
      read({
        firmwareSources: [
          'https://open.plant.example',
          { origin: 'https://firmware.plant.example', checksumRequired: true },
          { origin: 'https://other.plant.example' },
        ],
      }),
    ).toMatchObject({
      firmwareSources: [
        'https://open.plant.example',
        'https://firmware.plant.example',
        'https://other.plant.example',
      ],
      firmwareChecksumRequired: ['https://firmware.plant.example'],
    });
  });

  it.each([
    [{ origin: 'https://firmware.plant.example/images' }],
    [{ origin: 'https://firmware.plant.example', checksumRequired: 'yes' }],
    [{ origin: 'https://firmware.plant.example', username: 'u' }],
    [{ checksumRequired: true }],
  ])('stops the start at the source object %j, naming it', entry => {
    expect(() => read({ firmwareSources: [entry] })).toThrow(
      'servers.upgrades.firmwareSources[0]',
    );
  });

  it.each([
    ['https://factory.talos.dev/installer/', 'talosImages[0]'],
    ['factory.talos.dev/../installer/', 'talosImages[0]'],
    ['user@factory.talos.dev/installer/', 'talosImages[0]'],
    ['factory.talos.dev/installer/x:v1.12.0', 'talosImages[0]'],
  ])('stops the start at the image prefix %j, naming it', (prefix, where) => {
    expect(() => read({ talosImages: [prefix] })).toThrow(
      `servers.upgrades.${where}`,
    );
    expect(() => read({ talosImages: [prefix] })).toThrow(
      'is not an image prefix',
    );
  });

  it.each([
    'http://firmware.plant.example',
    'https://user:pass@firmware.plant.example',
    'https://firmware.plant.example/images',
    'https://firmware.plant.example\\@evil.example',
    'firmware.plant.example',
  ])('stops the start at the firmware source %j, naming it', source => {
    expect(() =>
      read({ firmwareSources: ['https://ok.example', source] }),
    ).toThrow('servers.upgrades.firmwareSources[1]');
    expect(() => read({ firmwareSources: [source] })).toThrow(
      'is not an https origin',
    );
  });

  it('stops the start at an empty prefix, naming it (config itself refuses an empty string)', () => {
    expect(() => read({ talosImages: [''] })).toThrow(
      'servers.upgrades.talosImages[0]',
    );
  });

  it('refuses a list longer than it names in a refusal', () => {
    const many = Array.from(
      { length: MAX_UPGRADE_SOURCES + 1 },
      (_, i) => `registry${i}.example/`,
    );
    expect(() => read({ talosImages: many })).toThrow(
      `at most ${MAX_UPGRADE_SOURCES}`,
    );
  });

  it('names a list of the wrong type', () => {
    expect(() => read({ talosImages: 'factory.talos.dev/installer/' })).toThrow(
      /servers\.upgrades\.talosImages/,
    );
  });
});

describe('checkInstallSource, a firmware source that requires a checksum', () => {
  const sources = {
    talosImages: [],
    firmwareSources: ['https://fw.plant.example', 'https://open.plant.example'],
    firmwareChecksumRequired: ['https://fw.plant.example'],
  };
  const checksum = `sha256:${'ab'.repeat(32)}`;

  it('refuses a request without one with 400, naming the source', () => {
    expect(() =>
      checkInstallSource(sources, {
        firmware: { imageURI: 'https://fw.plant.example/bios.bin' },
      }),
    ).toThrow(
      /the firmware source https:\/\/fw\.plant\.example requires a checksum .*\(servers\.upgrades\.firmwareSources\)/,
    );
  });

  it('takes it with one, and another source without', () => {
    expect(() =>
      checkInstallSource(sources, {
        firmware: { imageURI: 'https://fw.plant.example/bios.bin', checksum },
      }),
    ).not.toThrow();
    expect(() =>
      checkInstallSource(sources, {
        firmware: { imageURI: 'https://open.plant.example/bios.bin' },
      }),
    ).not.toThrow();
  });

  it.each([
    `sha256:${'AB'.repeat(32)}`,
    `sha256:${'ab'.repeat(31)}`,
    `md5:${'ab'.repeat(16)}`,
  ])('refuses the checksum %j whatever the source', bad => {
    expect(() =>
      checkInstallSource(sources, {
        firmware: {
          imageURI: 'https://open.plant.example/b.bin',
          checksum: bad,
        },
      }),
    ).toThrow(/is not sha256:<64 lowercase hex digits>/);
  });
});
