import { ServerListCache, type ListRow } from './ServerListCache';

/** Rows whose build() counts its calls. */
function rows(spec: Record<string, string | undefined>, built: string[]) {
  return Object.entries(spec).map(
    ([name, key]): ListRow => ({
      name,
      key,
      build: () => {
        built.push(name);
        return { name, key: key ?? null };
      },
    }),
  );
}

describe('ServerListCache', () => {
  it('answers the head with the rows, in order, as one JSON document', () => {
    const cache = new ServerListCache();
    const built: string[] = [];
    const out = cache.render(
      'ctx',
      { cluster: 'a', quorum: { derived: false, reason: 'x' } },
      rows({ b: '1', a: '1' }, built),
    );
    expect(JSON.parse(out.body)).toEqual({
      cluster: 'a',
      quorum: { derived: false, reason: 'x' },
      items: [
        { name: 'b', key: '1' },
        { name: 'a', key: '1' },
      ],
    });
    expect(JSON.parse(cache.render('ctx', {}, []).body)).toEqual({
      items: [],
    });
  });

  it('builds again only the rows whose key changed; the entity tag follows', () => {
    const cache = new ServerListCache();
    const built: string[] = [];
    const first = cache.render('ctx', {}, rows({ a: '1', b: '1' }, built));
    const same = cache.render('ctx', {}, rows({ a: '1', b: '1' }, built));
    expect(built).toEqual(['a', 'b']);
    expect(same).toEqual(first);

    const changed = cache.render('ctx', {}, rows({ a: '1', b: '2' }, built));
    expect(built).toEqual(['a', 'b', 'b']);
    expect(changed.etag).not.toBe(first.etag);
    expect(JSON.parse(changed.body).items[1]).toEqual({ name: 'b', key: '2' });
  });

  it('builds every row afresh in a new context, and for rows without a key', () => {
    const cache = new ServerListCache();
    const built: string[] = [];
    cache.render('alice', {}, rows({ a: '1', b: undefined }, built));
    cache.render('alice', {}, rows({ a: '1', b: undefined }, built));
    expect(built).toEqual(['a', 'b', 'b']);
    const bob = cache.render('bob', {}, rows({ a: '1' }, built));
    expect(built).toEqual(['a', 'b', 'b', 'a']);
    expect(bob.etag).not.toBe(
      cache.render('alice', {}, rows({ a: '1' }, built)).etag,
    );
  });

  it('changes the tag when a keyless row or the head changes', () => {
    const cache = new ServerListCache();
    const keyless = (value: number): ListRow[] => [
      { name: 'a', key: undefined, build: () => ({ value }) },
    ];
    const one = cache.render('ctx', {}, keyless(1));
    expect(cache.render('ctx', {}, keyless(2)).etag).not.toBe(one.etag);
    expect(cache.render('ctx', { q: 1 }, keyless(1)).etag).not.toBe(one.etag);
    expect(cache.render('ctx', {}, keyless(1)).etag).toBe(one.etag);
  });

  it('keeps the rows of a few contexts, dropping the least recently used', () => {
    const cache = new ServerListCache(2);
    const built: string[] = [];
    cache.render('one', {}, rows({ a: '1' }, built));
    cache.render('two', {}, rows({ b: '1' }, built));
    cache.render('one', {}, rows({ a: '1' }, built)); // one is now the most recent
    cache.render('three', {}, rows({ c: '1' }, built)); // drops two
    expect(built).toEqual(['a', 'b', 'c']);
    cache.render('one', {}, rows({ a: '1' }, built));
    cache.render('two', {}, rows({ b: '1' }, built));
    expect(built).toEqual(['a', 'b', 'c', 'b']);
  });

  it('forgets rows that left the list', () => {
    const cache = new ServerListCache();
    const built: string[] = [];
    cache.render('ctx', {}, rows({ a: '1', b: '1' }, built));
    cache.render('ctx', {}, rows({ a: '1' }, built));
    cache.render('ctx', {}, rows({ a: '1', b: '1' }, built));
    expect(built).toEqual(['a', 'b', 'b']);
  });
});
