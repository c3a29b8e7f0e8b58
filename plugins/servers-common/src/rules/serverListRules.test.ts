import {
  compareServers,
  matchesServerFilter,
  normalizeServerFilter,
  type ServerOrderFields,
} from './serverListRules';

const server = (
  name: string,
  fields: Partial<ServerOrderFields> = {},
): ServerOrderFields => ({
  name,
  roles: ['worker'],
  labels: { 'node-role.kubernetes.io/worker': '' },
  ready: true,
  ...fields,
});

describe('matchesServerFilter', () => {
  const cp = server('CP-1', {
    roles: ['control-plane'],
    labels: { 'node-role.kubernetes.io/control-plane': '', Zone: 'East' },
  });

  it('matches a part of the name, a role or a label as key=value, in any case', () => {
    expect(matchesServerFilter(cp, 'cp-')).toBe(true);
    expect(matchesServerFilter(cp, 'CONTROL')).toBe(true);
    expect(matchesServerFilter(cp, 'zone=east')).toBe(true);
    expect(matchesServerFilter(cp, 'e=ea')).toBe(true);
    expect(matchesServerFilter(cp, 'zone=west')).toBe(false);
    expect(matchesServerFilter(cp, 'worker')).toBe(false);
  });

  it('ignores surrounding blanks; an empty filter matches every server', () => {
    expect(matchesServerFilter(cp, '  cp-1 ')).toBe(true);
    expect(matchesServerFilter(cp, '')).toBe(true);
    expect(matchesServerFilter(cp, '   ')).toBe(true);
    expect(matchesServerFilter(server('x', { labels: undefined }), 'a=b')).toBe(
      false,
    );
    expect(normalizeServerFilter('  Zone=East ')).toBe('zone=east');
  });
});

describe('compareServers', () => {
  const names = (list: ServerOrderFields[]) => list.map(s => s.name);
  const sorted = (
    list: ServerOrderFields[],
    key: Parameters<typeof compareServers>[2],
    direction: Parameters<typeof compareServers>[3],
  ) => names([...list].sort((a, b) => compareServers(a, b, key, direction)));

  const list = [
    server('w-2', { ready: false, maintenance: { phase: 'Draining' } }),
    server('cp-1', { roles: ['control-plane'] }),
    server('w-10'),
    server('w-1', { ready: false }),
    server('W-3', { maintenance: { phase: 'Cordoned' } }),
  ];

  it('sorts by name with one collation, case-insensitively first', () => {
    expect(sorted(list, 'name', 'asc')).toEqual([
      'cp-1',
      'w-1',
      'w-10',
      'w-2',
      'W-3',
    ]);
    expect(sorted(list, 'name', 'desc')).toEqual([
      'W-3',
      'w-2',
      'w-10',
      'w-1',
      'cp-1',
    ]);
  });

  it('sorts by a column with ties by name ascending, whatever the direction', () => {
    expect(sorted(list, 'ready', 'asc')).toEqual([
      'w-1',
      'w-2',
      'cp-1',
      'w-10',
      'W-3',
    ]);
    expect(sorted(list, 'ready', 'desc')).toEqual([
      'cp-1',
      'w-10',
      'W-3',
      'w-1',
      'w-2',
    ]);
    expect(sorted(list, 'phase', 'asc')).toEqual([
      'cp-1',
      'w-1',
      'w-10',
      'W-3',
      'w-2',
    ]);
    expect(sorted(list, 'role', 'desc')).toEqual([
      'w-1',
      'w-10',
      'w-2',
      'W-3',
      'cp-1',
    ]);
  });

  it('is a total order: equal only for the same name', () => {
    expect(compareServers(server('a'), server('a'), 'ready', 'desc')).toBe(0);
    expect(
      Math.sign(compareServers(server('a'), server('b'), 'ready', 'desc')),
    ).toBe(-1);
  });
});

describe('the Health column', () => {
  const servers = [
    server('ok-1', { health: { rollup: 'OK' } }),
    server('none-1'),
    server('crit-1', { health: { rollup: 'Critical' } }),
    server('warn-1', { health: { rollup: 'Warning' } }),
    server('unknown-1', { health: { rollup: 'Unknown' } }),
    server('crit-0', { health: { rollup: 'Critical' } }),
  ];

  it('sorts the worst first ascending, servers without a reading last, ties by name', () => {
    const asc = [...servers].sort((a, b) =>
      compareServers(a, b, 'health', 'asc'),
    );
    expect(asc.map(s => s.name)).toEqual([
      'crit-0',
      'crit-1',
      'warn-1',
      'unknown-1',
      'ok-1',
      'none-1',
    ]);
    const desc = [...servers].sort((a, b) =>
      compareServers(a, b, 'health', 'desc'),
    );
    expect(desc.map(s => s.name)).toEqual([
      'none-1',
      'ok-1',
      'unknown-1',
      'warn-1',
      'crit-0',
      'crit-1',
    ]);
  });

  it('filters on the rollup, as a word or as health=<rollup>', () => {
    const names = (filter: string) =>
      servers.filter(s => matchesServerFilter(s, filter)).map(s => s.name);
    expect(names('Critical')).toEqual(['crit-1', 'crit-0']);
    expect(names('health=warning')).toEqual(['warn-1']);
    // A server without a reading matches no health filter.
    expect(names('health=')).not.toContain('none-1');
  });

  it("filters on the open maintenance's phase, as a word or as phase=<phase>", () => {
    const held = server('held-1', {
      maintenance: { phase: 'AwaitingApproval' },
    });
    const draining = server('drain-1', { maintenance: { phase: 'Draining' } });
    const idle = server('idle-1');
    const names = (filter: string) =>
      [held, draining, idle]
        .filter(s => matchesServerFilter(s, filter))
        .map(s => s.name);
    expect(names('phase=AwaitingApproval')).toEqual(['held-1']);
    expect(names('phase=awaitingapproval')).toEqual(['held-1']);
    expect(names('phase=')).toEqual(['held-1', 'drain-1']);
    // A word of the phase, as of the health rollup; a server without one matches none.
    expect(names('awaiting')).toEqual(['held-1']);
    expect(names('phase=d')).toEqual(['drain-1']);
  });
});
