import {
  checkDiscoveryAddress,
  checkResolvedAddresses,
  parseCidr,
  parseDiscoveryEndpoint,
  parseIp,
} from './discoveryNetworks';

const reach = {
  allowedNetworks: ['127.0.10.0/24', 'fd00:5::/64'],
  talosPort: 50000,
};

describe('IP literals and CIDRs', () => {
  it('reads IPv4 and IPv6, and an IPv4-mapped IPv6 address as its IPv4 address', () => {
    expect(parseIp('127.0.10.5')).toEqual([127, 0, 10, 5]);
    expect(parseIp('::ffff:169.254.169.254')).toEqual([169, 254, 169, 254]);
    expect(parseIp('::ffff:a9fe:a9fe')).toEqual([169, 254, 169, 254]);
    expect(parseIp('fd00:5::1')?.length).toBe(16);
    expect(parseIp('::1')).toEqual([...new Array(15).fill(0), 1]);
    expect(parseIp('1:2:3:4:5:6:7.8.9.10')?.length).toBe(16);
  });

  it.each([
    '010.0.0.1',
    '1.2.3',
    '256.1.1.1',
    '1::2::3',
    'fe80::1%eth0',
    '',
    'localhost',
  ])('refuses %j as an IP literal', text =>
    expect(parseIp(text)).toBeUndefined(),
  );

  it('takes canonical CIDRs only, as the CRD rule does', () => {
    expect(parseCidr('127.0.10.0/24')?.prefix).toBe(24);
    expect(parseCidr('fd00:5::/64')?.prefix).toBe(64);
    expect(parseCidr('0.0.0.0/0')?.prefix).toBe(0);
    expect(parseCidr('127.0.10.5/24')).toBeUndefined();
    expect(parseCidr('10.0.0.0/33')).toBeUndefined();
    expect(parseCidr('::ffff:0:0/96')).toBeUndefined();
    expect(parseCidr('10.0.0.0/024')).toBeUndefined();
  });
});

describe('discovery addresses', () => {
  it('reads host, host:port, [v6]:port and a bare IPv6 address', () => {
    expect(parseDiscoveryEndpoint('127.0.10.5')).toMatchObject({
      host: '127.0.10.5',
      port: 50000,
      portGiven: false,
    });
    expect(parseDiscoveryEndpoint('node-7.example:50000')).toMatchObject({
      host: 'node-7.example',
      port: 50000,
      ip: undefined,
    });
    expect(parseDiscoveryEndpoint('[fd00:5::1]:50000')?.host).toBe('fd00:5::1');
    expect(parseDiscoveryEndpoint('fd00:5::1')?.port).toBe(50000);
  });

  it.each([
    '1.2.3.4:99999',
    '1.2.3.4:0',
    '1.2.3.4:+80',
    '1.2.3.4:',
    ':50000',
    '1.2.3',
    'a b',
    '[localhost]:50000',
    'host:1:2',
    '-bad.example',
  ])('refuses %j as not host[:port]', address => {
    expect(checkDiscoveryAddress(address, reach)).toMatchObject({
      allowed: false,
      refusal: 'invalid',
    });
  });

  it('refuses a port other than the Talos port, and addresses outside the networks', () => {
    expect(checkDiscoveryAddress('127.0.10.5:1', reach)).toMatchObject({
      allowed: false,
      refusal: 'port',
      message: expect.stringContaining('(50000)'),
    });
    for (const address of [
      '127.0.0.1',
      '169.254.169.254:50000',
      '[::ffff:169.254.169.254]:50000',
      '[::1]:50000',
      '127.0.11.5',
    ]) {
      expect(checkDiscoveryAddress(address, reach)).toMatchObject({
        allowed: false,
        refusal: 'outside',
        message: 'outside the allowed networks (127.0.10.0/24, fd00:5::/64)',
      });
    }
    expect(checkDiscoveryAddress('127.0.10.5:50000', reach).allowed).toBe(true);
    expect(checkDiscoveryAddress('[fd00:5::9]', reach).allowed).toBe(true);
  });

  it('fails closed: a cluster with no allowed networks reaches nothing', () => {
    expect(
      checkDiscoveryAddress('127.0.10.5', {
        allowedNetworks: [],
        talosPort: 50000,
      }),
    ).toMatchObject({ allowed: false, refusal: 'noNetworks' });
  });

  it('lets a name through to be resolved; every resolved address must be inside', () => {
    const check = checkDiscoveryAddress('localhost', reach);
    expect(check).toMatchObject({ allowed: true, endpoint: { ip: undefined } });
    const endpoint = (check as { endpoint: any }).endpoint;
    expect(
      checkResolvedAddresses(endpoint, ['127.0.10.5'], reach).allowed,
    ).toBe(true);
    expect(
      checkResolvedAddresses(endpoint, ['127.0.10.5', '127.0.0.1'], reach),
    ).toMatchObject({
      allowed: false,
      refusal: 'outside',
      message:
        'localhost resolves to an address outside the allowed networks (127.0.10.0/24, fd00:5::/64)',
    });
    expect(checkResolvedAddresses(endpoint, [], reach).allowed).toBe(false);
  });
});
