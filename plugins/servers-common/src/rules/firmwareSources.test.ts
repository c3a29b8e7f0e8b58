import {
  firmwareSourceAllowed,
  MAX_FIRMWARE_URI_LENGTH,
  parseFirmwareSource,
  whyFirmwareSourceRefused,
} from './firmwareSources';

const SOURCES = ['https://fw.example.com', 'https://10.0.0.5:8443/'];

describe('firmwareSourceAllowed', () => {
  describe('refuses what only looks like an allowed source', () => {
    it.each([
      ['http instead of https', 'http://fw.example.com/bios-2.5.0.bin'],
      ['a scheme in another case', 'HTTPS://fw.example.com/bios-2.5.0.bin'],
      [
        'user info before the host',
        'https://fw.example.com@evil.example/b.bin',
      ],
      ['user info with a password', 'https://u:p@fw.example.com/bios.bin'],
      [
        'a longer host with the same start',
        'https://fw.example.com.evil.example/b.bin',
      ],
      ['a look-alike host', 'https://fw-example.com/bios-2.5.0.bin'],
      [
        'the host only in the path',
        'https://evil.example/fw.example.com/b.bin',
      ],
      ['another port', 'https://fw.example.com:8443/bios-2.5.0.bin'],
      ['the allowed port left out', 'https://10.0.0.5/bios-2.5.0.bin'],
      [
        'a backslash that WHATWG reads as a slash',
        'https://evil.example\\@fw.example.com/b.bin',
      ],
      ['a backslash in the path', 'https://fw.example.com\\..\\b.bin'],
      ['a percent-encoded host', 'https://fw%2eexample.com/bios.bin'],
      ['an uppercase host', 'https://FW.example.com/bios-2.5.0.bin'],
      ['a non-ASCII look-alike host', 'https://fw.exаmple.com/bios.bin'],
      ['a blank', 'https://fw.example.com /bios.bin'],
      ['a tab', 'https://fw.example.com\t/bios.bin'],
      ['a newline', 'https://fw.example.com/bios.bin\nHost: evil'],
      ['a trailing dot on the host', 'https://fw.example.com./bios.bin'],
      ['an empty host', 'https:///fw.example.com/bios.bin'],
      ['no URL at all', 'fw.example.com/bios.bin'],
      ['a file URL', 'file:///etc/passwd'],
      ['the empty string', ''],
      [
        'a URI past the limit',
        `https://fw.example.com/${'a'.repeat(MAX_FIRMWARE_URI_LENGTH)}`,
      ],
    ])('%s', (_, uri) => {
      expect(firmwareSourceAllowed(uri, SOURCES)).toBe(false);
      expect(whyFirmwareSourceRefused(uri, SOURCES)).toEqual(
        expect.any(String),
      );
    });
  });

  it('allows nothing when no source is configured', () => {
    expect(
      whyFirmwareSourceRefused('https://fw.example.com/bios-2.5.0.bin', []),
    ).toBe(
      'no firmware sources are allowed in this deployment (none configured)',
    );
  });

  it('ignores a configured source that is not an https origin', () => {
    const bad = [
      'http://fw.example.com',
      'https://fw.example.com/images',
      'https://u@fw.example.com',
      'fw.example.com',
    ];
    for (const source of bad)
      expect(parseFirmwareSource(source)).toBeUndefined();
    expect(
      firmwareSourceAllowed('https://fw.example.com/images/b-1.bin', bad),
    ).toBe(false);
  });

  it.each([
    ['a path under the origin', 'https://fw.example.com/bios/bios-2.5.0.bin'],
    ['a query', 'https://fw.example.com/get?file=bios-2.5.0.bin'],
    [
      'the default port written out',
      'https://fw.example.com:443/bios-2.5.0.bin',
    ],
    ['an IP source with its port', 'https://10.0.0.5:8443/bmc-1.13.0.fwpkg'],
  ])('allows %s', (_, uri) => {
    expect(whyFirmwareSourceRefused(uri, SOURCES)).toBeUndefined();
    expect(firmwareSourceAllowed(uri, SOURCES)).toBe(true);
  });

  it('names the allowed sources in its sentence', () => {
    expect(
      whyFirmwareSourceRefused('https://evil.example/b-1.bin', SOURCES),
    ).toBe(
      'the firmware image URI "https://evil.example/b-1.bin" is not from an allowed firmware source (allowed: https://fw.example.com, https://10.0.0.5:8443)',
    );
  });
});
