import {
  firmwareAlreadyAt,
  parseFirmwareSourceCredentials,
  firmwareSourceAllowed,
  parseFirmwareSourceEntry,
  whyFirmwareChecksumMissing,
  whyFirmwareChecksumRefused,
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

const SHA = `sha256:${'ab'.repeat(32)}`;

describe('whyFirmwareChecksumRefused', () => {
  it('takes sha256: and 64 lowercase hex digits', () => {
    expect(whyFirmwareChecksumRefused(SHA)).toBeUndefined();
  });

  it.each([
    ['uppercase hex', `sha256:${'AB'.repeat(32)}`],
    ['the algorithm in capitals', `SHA256:${'ab'.repeat(32)}`],
    ['63 digits', `sha256:${'a'.repeat(63)}`],
    ['65 digits', `sha256:${'a'.repeat(65)}`],
    ['md5', `md5:${'a'.repeat(32)}`],
    ['sha512', `sha512:${'a'.repeat(128)}`],
    ['no algorithm', 'ab'.repeat(32)],
    ['a trailing newline', `${SHA}\n`],
    ['a blank before', ` ${SHA}`],
    ['not hex', `sha256:${'g'.repeat(64)}`],
  ])('refuses %s', (_what, checksum) => {
    expect(whyFirmwareChecksumRefused(checksum)).toMatch(
      /is not sha256:<64 lowercase hex digits>/,
    );
  });
});

describe('parseFirmwareSourceEntry', () => {
  it('reads an origin string, checksum not required', () => {
    expect(parseFirmwareSourceEntry('https://fw.example.com/')).toEqual({
      origin: 'https://fw.example.com',
      checksumRequired: false,
    });
  });

  it('reads an object with checksumRequired', () => {
    expect(
      parseFirmwareSourceEntry({
        origin: 'https://fw.example.com:8443',
        checksumRequired: true,
      }),
    ).toEqual({
      origin: 'https://fw.example.com:8443',
      checksumRequired: true,
    });
  });

  it.each([
    [
      'an object whose origin has a path',
      { origin: 'https://fw.example.com/images' },
    ],
    ['an object with user info', { origin: 'https://u:p@fw.example.com' }],
    ['an http origin', { origin: 'http://fw.example.com' }],
    ['an object without origin', { checksumRequired: true }],
    [
      'checksumRequired as a string',
      { origin: 'https://fw.example.com', checksumRequired: 'true' },
    ],
    ['an unknown key', { origin: 'https://fw.example.com', username: 'x' }],
    ['a string with a path', 'https://fw.example.com/images'],
    ['a list', ['https://fw.example.com']],
    ['null', null],
    ['a number', 443],
  ])('refuses %s', (_what, entry) => {
    expect(parseFirmwareSourceEntry(entry)).toBeUndefined();
  });
});

describe('whyFirmwareChecksumMissing', () => {
  const sources = [
    { origin: 'https://fw.example.com', checksumRequired: true },
    { origin: 'https://open.example.com', checksumRequired: false },
  ];

  it('refuses an image from a source requiring a checksum without one', () => {
    expect(
      whyFirmwareChecksumMissing(
        { imageURI: 'https://fw.example.com/bios.bin' },
        sources,
      ),
    ).toMatch(/https:\/\/fw.example.com requires a checksum/);
  });

  it('takes it with a checksum, and a source that requires none without', () => {
    expect(
      whyFirmwareChecksumMissing(
        { imageURI: 'https://fw.example.com/bios.bin', checksum: SHA },
        sources,
      ),
    ).toBeUndefined();
    expect(
      whyFirmwareChecksumMissing(
        { imageURI: 'https://open.example.com/bios.bin' },
        sources,
      ),
    ).toBeUndefined();
  });

  it('refuses a malformed checksum whatever the source', () => {
    expect(
      whyFirmwareChecksumMissing(
        {
          imageURI: 'https://open.example.com/bios.bin',
          checksum: `md5:${'a'.repeat(32)}`,
        },
        sources,
      ),
    ).toMatch(/not sha256/);
  });
});

describe('firmwareAlreadyAt', () => {
  const inventory = [
    {
      id: '/redfish/v1/UpdateService/FirmwareInventory/BIOS',
      name: 'BIOS',
      version: '2.5.0',
    },
    {
      id: '/redfish/v1/UpdateService/FirmwareInventory/BMC',
      name: 'BMC',
      version: '1.0.0',
    },
  ];

  it('says already at when every target reports the version', () => {
    expect(firmwareAlreadyAt('2.5.0', inventory, ['BIOS'])).toBe(
      'already at 2.5.0',
    );
    expect(
      firmwareAlreadyAt('2.5.0', inventory, [
        '/redfish/v1/UpdateService/FirmwareInventory/BIOS',
      ]),
    ).toBe('already at 2.5.0');
  });

  it("matches a health reading (names only) by the target's last segment", () => {
    expect(
      firmwareAlreadyAt(
        '2.5.0',
        [{ name: 'BIOS', version: '2.5.0' }],
        ['/redfish/v1/UpdateService/FirmwareInventory/BIOS'],
      ),
    ).toBe('already at 2.5.0');
  });

  it('is not there when a target reports another version or is missing', () => {
    expect(
      firmwareAlreadyAt('2.5.0', inventory, ['BIOS', 'BMC']),
    ).toBeUndefined();
    expect(firmwareAlreadyAt('2.5.0', inventory, ['NIC'])).toBeUndefined();
    expect(firmwareAlreadyAt('2.5.1', inventory, ['BIOS'])).toBeUndefined();
  });

  it('without targets, only when every component reports it', () => {
    expect(firmwareAlreadyAt('2.5.0', inventory, undefined)).toBeUndefined();
    expect(firmwareAlreadyAt('1.0.0', [inventory[1]], undefined)).toBe(
      'already at 1.0.0',
    );
  });

  it('says nothing without a version or an inventory', () => {
    expect(firmwareAlreadyAt(undefined, inventory, ['BIOS'])).toBeUndefined();
    expect(firmwareAlreadyAt('2.5.0', [], ['BIOS'])).toBeUndefined();
    expect(firmwareAlreadyAt('2.5.0', undefined, ['BIOS'])).toBeUndefined();
  });
});

describe('parseFirmwareSourceCredentials', () => {
  const allowed = ['https://fw.example.com', 'https://10.0.0.5:8443'];

  it('gives each allowed origin its username and password', () => {
    const parsed = parseFirmwareSourceCredentials(
      JSON.stringify({
        'https://fw.example.com': { username: 'fw', password: 's3cret' },
      }),
      allowed,
    );
    expect(parsed.byOrigin.get('https://fw.example.com')).toEqual({
      username: 'fw',
      password: 's3cret',
    });
    expect(parsed.ignored).toEqual([]);
  });

  it('never uses an entry for an origin outside the list, nor one with a path or another port', () => {
    const parsed = parseFirmwareSourceCredentials(
      JSON.stringify({
        'https://evil.example': { username: 'a', password: 'b' },
        'https://fw.example.com/images': { username: 'a', password: 'b' },
        'https://fw.example.com:444': { username: 'a', password: 'b' },
        'http://fw.example.com': { username: 'a', password: 'b' },
        'fw.example.com': { username: 'a', password: 'b' },
      }),
      allowed,
    );
    expect(parsed.byOrigin.size).toBe(0);
    expect(parsed.ignored).toHaveLength(5);
  });

  it('refuses what is not the document, never quoting a value', () => {
    expect(() => parseFirmwareSourceCredentials('s3cret', allowed)).toThrow(
      /is not JSON/,
    );
    expect(() => parseFirmwareSourceCredentials('["s3cret"]', allowed)).toThrow(
      /is not an object/,
    );
    let message = '';
    try {
      parseFirmwareSourceCredentials(
        JSON.stringify({
          'https://fw.example.com': { username: 'a:b', password: 's3cret' },
        }),
        allowed,
      );
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toMatch(/is not \{username, password\}/);
    expect(message).not.toMatch(/s3cret|a:b/);
  });
});
