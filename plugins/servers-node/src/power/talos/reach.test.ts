import { dnsResolver, reachFor, type ResolveName } from './reach';

const cluster = (allowedNetworks: string[], talosPort?: number) => ({
  spec: { discovery: { allowedNetworks, talosPort } },
});

const resolvesTo =
  (...addresses: string[]): ResolveName =>
  async () =>
    addresses;

const noName: ResolveName = async () => {
  throw new Error('no such name');
};

describe('reachFor', () => {
  it('dials an IP inside the allowed networks as written', async () => {
    await expect(
      reachFor(cluster(['10.0.0.0/24']), '10.0.0.5', noName),
    ).resolves.toEqual({ allowed: true, dial: '10.0.0.5' });
  });

  it('names the port of a cluster whose Talos port is not the default', async () => {
    await expect(
      reachFor(cluster(['10.0.0.0/24'], 50001), '10.0.0.5', noName),
    ).resolves.toEqual({ allowed: true, dial: '10.0.0.5:50001' });
  });

  it('refuses an address outside the networks, without resolving anything', async () => {
    const resolve = jest.fn(noName);
    const reach = await reachFor(cluster(['10.0.0.0/24']), '10.1.0.5', resolve);
    expect(reach).toMatchObject({ allowed: false, state: 'NotAllowed' });
    expect(resolve).not.toHaveBeenCalled();
  });

  it('dials the first address a name resolves to when every one is inside', async () => {
    await expect(
      reachFor(
        cluster(['10.0.0.0/24', 'fd00::/64']),
        'machine.example',
        resolvesTo('fd00::5', '10.0.0.5'),
      ),
    ).resolves.toEqual({ allowed: true, dial: '[fd00::5]:50000' });
  });

  it('refuses a name when one of its addresses is outside', async () => {
    await expect(
      reachFor(
        cluster(['10.0.0.0/24']),
        'machine.example',
        resolvesTo('10.0.0.5', '192.168.1.5'),
      ),
    ).resolves.toMatchObject({
      allowed: false,
      state: 'NotAllowed',
      detail: 'machine.example resolved to 10.0.0.5, 192.168.1.5',
    });
  });

  it('calls a name that does not resolve Unreachable, the error for the log only', async () => {
    await expect(
      reachFor(cluster(['10.0.0.0/24']), 'machine.example', noName),
    ).resolves.toEqual({
      allowed: false,
      state: 'Unreachable',
      message: 'machine.example does not resolve',
      detail: 'no such name',
    });
  });
});

describe('dnsResolver', () => {
  it('resolves an IP literal to itself', async () => {
    await expect(dnsResolver(5000)('127.0.0.1')).resolves.toEqual([
      '127.0.0.1',
    ]);
  });
});
