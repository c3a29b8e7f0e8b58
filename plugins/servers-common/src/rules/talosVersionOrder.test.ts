import { compareServers } from './serverListRules';
import { compareTalosVersions } from './talosVersionOrder';

describe('compareTalosVersions', () => {
  it('orders by major, minor and patch as numbers, not as text', () => {
    expect(
      ['v1.12.0', 'v1.9.0', 'v1.11.3', 'v1.10.10', 'v1.10.9', 'v2.0.0'].sort(
        compareTalosVersions,
      ),
    ).toEqual([
      'v1.9.0',
      'v1.10.9',
      'v1.10.10',
      'v1.11.3',
      'v1.12.0',
      'v2.0.0',
    ]);
  });

  it('puts a pre-release before its release, beta.2 before beta.10', () => {
    expect(
      ['v1.12.0', 'v1.12.0-beta.10', 'v1.12.0-alpha.1', 'v1.12.0-beta.2'].sort(
        compareTalosVersions,
      ),
    ).toEqual([
      'v1.12.0-alpha.1',
      'v1.12.0-beta.2',
      'v1.12.0-beta.10',
      'v1.12.0',
    ]);
  });

  it('puts what is not a version after every version', () => {
    expect(['custom', 'v1.9.0', 'v1.12'].sort(compareTalosVersions)).toEqual([
      'v1.9.0',
      'custom',
      'v1.12',
    ]);
    expect(compareTalosVersions('v1.12.0', '1.12.0')).toBe(0);
  });
});

describe('compareServers by talos', () => {
  const server = (name: string, talosVersion?: string) => ({
    name,
    roles: [],
    ready: true,
    ...(talosVersion ? { talosVersion } : {}),
  });
  const servers = [
    server('w-none'),
    server('w-12', 'v1.12.0'),
    server('w-9', 'v1.9.0'),
    server('a-none'),
    server('w-11', 'v1.11.3'),
    server('b-12', 'v1.12.0'),
  ];
  const order = (direction: 'asc' | 'desc') =>
    [...servers]
      .sort((a, b) => compareServers(a, b, 'talos', direction))
      .map(s => s.name);

  it('ascending: v1.9.0 before v1.12.0, ties by name, no version last', () => {
    expect(order('asc')).toEqual([
      'w-9',
      'w-11',
      'b-12',
      'w-12',
      'a-none',
      'w-none',
    ]);
  });

  it('descending: newest first, ties still by name, no version still last', () => {
    expect(order('desc')).toEqual([
      'b-12',
      'w-12',
      'w-11',
      'w-9',
      'a-none',
      'w-none',
    ]);
  });
});
