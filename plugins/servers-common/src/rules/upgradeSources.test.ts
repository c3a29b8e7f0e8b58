import {
  imageAllowed,
  isImagePrefix,
  parseImageReference,
  talosVersionOfImage,
  talosVersionOfOsImage,
  whyForceRefused,
  whyUpgradeImageRefused,
} from './upgradeSources';

const FACTORY = 'factory.talos.dev/installer/';
const SCHEMATIC =
  '376567988ad370138ad8b2698212367b8edcb69b5fd68c80be1f2ec7d603b4ba';
const DIGEST = `sha256:${'a'.repeat(64)}`;

describe('imageAllowed', () => {
  it('allows an image below a prefix that ends with a slash', () => {
    expect(
      imageAllowed(`factory.talos.dev/installer/${SCHEMATIC}:v1.12.0`, [
        FACTORY,
      ]),
    ).toBe(true);
    expect(
      imageAllowed(
        `factory.talos.dev/installer/${SCHEMATIC}:v1.12.0@${DIGEST}`,
        [FACTORY],
      ),
    ).toBe(true);
  });

  it('allows any tag of the one repository a prefix names without a slash', () => {
    const prefixes = ['ghcr.io/siderolabs/installer'];
    expect(imageAllowed('ghcr.io/siderolabs/installer:v1.12.0', prefixes)).toBe(
      true,
    );
    expect(
      imageAllowed('ghcr.io/siderolabs/installer:v1.12.0', [
        'ghcr.io/siderolabs/installer:',
      ]),
    ).toBe(true);
    // A repository below it is another repository.
    expect(
      imageAllowed('ghcr.io/siderolabs/installer/other:v1.12.0', prefixes),
    ).toBe(false);
  });

  it('allows nothing without a prefix', () => {
    expect(imageAllowed('ghcr.io/siderolabs/installer:v1.12.0', [])).toBe(
      false,
    );
  });

  describe('refuses what only looks like an allowed source', () => {
    const prefixes = [FACTORY, 'ghcr.io/siderolabs/installer'];
    it.each([
      // a registry host that merely starts with the prefix's host
      ['factory.talos.dev.evil.example/installer/x:v1.12.0'],
      ['factory.talos.devil.example/installer/x:v1.12.0'],
      ['factory.talos.dev:8443/installer/x:v1.12.0'],
      // a repository that merely starts with the prefix's repository
      ['factory.talos.dev/installer-evil/x:v1.12.0'],
      ['factory.talos.dev/installerx:v1.12.0'],
      ['ghcr.io/siderolabs/installer-evil:v1.12.0'],
      ['ghcr.io/siderolabs/installerx:v1.12.0'],
      // userinfo, and an @ that is not a digest
      ['factory.talos.dev@evil.example/installer/x:v1.12.0'],
      ['user@factory.talos.dev/installer/x:v1.12.0'],
      ['evil.example/x@factory.talos.dev/installer/x:v1.12.0'],
      [`factory.talos.dev/installer/x:v1.12.0@sha256:${'A'.repeat(64)}`],
      // dot segments and empty components
      ['factory.talos.dev/installer/../evil:v1.12.0'],
      ['factory.talos.dev/installer/./x:v1.12.0'],
      ['factory.talos.dev/installer//x:v1.12.0'],
      ['factory.talos.dev/installer/:v1.12.0'],
      // a scheme, whitespace, case
      [`https://factory.talos.dev/installer/x:v1.12.0`],
      [' factory.talos.dev/installer/x:v1.12.0'],
      ['factory.talos.dev/installer/x:v1.12.0\n'],
      ['FACTORY.TALOS.DEV/installer/x:v1.12.0'],
      ['factory.talos.dev/installer/X:v1.12.0'],
      // the prefix itself, and no tag (the tag is the version it installs)
      ['factory.talos.dev/installer/'],
      ['factory.talos.dev/installer/x'],
      ['ghcr.io/siderolabs/installer'],
      // a docker.io reference without a registry, whose path starts like the prefix
      ['factory/installer/x:v1.12.0'],
      [''],
      [`factory.talos.dev/installer/${'x'.repeat(600)}:v1.12.0`],
    ])('%j', image => {
      expect(imageAllowed(image, prefixes)).toBe(false);
    });
  });

  it('ignores a prefix it cannot read rather than allowing by it', () => {
    for (const prefix of [
      'factory.talos.dev/installer/x:v1.12',
      'https://factory.talos.dev/',
      'factory.talos.dev/../',
      '',
      '/',
    ]) {
      expect(isImagePrefix(prefix)).toBe(false);
      expect(
        imageAllowed('factory.talos.dev/installer/x:v1.12.0', [prefix]),
      ).toBe(false);
    }
    expect(isImagePrefix(FACTORY)).toBe(true);
    expect(isImagePrefix('127.0.0.1:5000/')).toBe(true);
  });

  it('allows a local registry with a port only by its own host and port', () => {
    expect(
      imageAllowed('127.0.0.1:5000/installer:v1.12.0', ['127.0.0.1:5000/']),
    ).toBe(true);
    expect(
      imageAllowed('127.0.0.1:50000/installer:v1.12.0', ['127.0.0.1:5000/']),
    ).toBe(false);
  });
});

describe('talosVersionOfImage', () => {
  it('is the tag when it is a version', () => {
    expect(talosVersionOfImage(`${FACTORY}${SCHEMATIC}:v1.12.0`)).toBe(
      'v1.12.0',
    );
    expect(
      talosVersionOfImage(
        `ghcr.io/siderolabs/installer:v1.13.0-beta.1@${DIGEST}`,
      ),
    ).toBe('v1.13.0-beta.1');
  });

  it('is undefined without a tag that names a version', () => {
    expect(talosVersionOfImage('ghcr.io/siderolabs/installer')).toBeUndefined();
    expect(
      talosVersionOfImage('ghcr.io/siderolabs/installer:latest'),
    ).toBeUndefined();
    expect(talosVersionOfImage('127.0.0.1:5000/installer')).toBeUndefined();
    expect(talosVersionOfImage('not a reference')).toBeUndefined();
  });
});

describe('talosVersionOfOsImage', () => {
  it("reads a Talos node's osImage", () => {
    expect(talosVersionOfOsImage('Talos (v1.11.3)')).toBe('v1.11.3');
    expect(talosVersionOfOsImage('Ubuntu 24.04 LTS')).toBeUndefined();
    expect(talosVersionOfOsImage(undefined)).toBeUndefined();
    expect(talosVersionOfOsImage('Talos (latest)')).toBeUndefined();
  });
});

describe('parseImageReference', () => {
  it('takes a reference apart', () => {
    expect(parseImageReference(`localhost:5000/a/b:v1@${DIGEST}`)).toEqual({
      registry: 'localhost:5000',
      path: ['a', 'b'],
      tag: 'v1',
      digest: DIGEST,
    });
    expect(parseImageReference('library/busybox')).toEqual({
      registry: undefined,
      path: ['library', 'busybox'],
      tag: undefined,
      digest: undefined,
    });
  });
});

describe('whyUpgradeImageRefused', () => {
  it('names the image and the allowed list', () => {
    expect(
      whyUpgradeImageRefused('evil.example/installer:v1.12.0', [FACTORY]),
    ).toBe(
      'image evil.example/installer:v1.12.0 is not in the allowed list (factory.talos.dev/installer/)',
    );
    expect(whyUpgradeImageRefused(`${FACTORY}x:v1.12.0`, [])).toMatch(
      /no Talos image prefix is allowed/,
    );
    expect(whyUpgradeImageRefused(`${FACTORY}x:latest`, [FACTORY])).toMatch(
      /names no Talos version/,
    );
    expect(
      whyUpgradeImageRefused(`${FACTORY}x:v1.12.0`, [FACTORY]),
    ).toBeUndefined();
  });
});

describe('whyForceRefused', () => {
  it('takes force only at the hazard rung', () => {
    expect(whyForceRefused({ force: true }, 'hazard')).toBeUndefined();
    expect(whyForceRefused({}, 'reason')).toBeUndefined();
    expect(whyForceRefused({ force: true }, 'typed-name')).toMatch(
      /only with the hazard ceremony.*typed-name rung/,
    );
    expect(whyForceRefused({ force: true }, undefined)).toMatch(/no rung/);
  });
});
