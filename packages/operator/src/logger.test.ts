import { createLogger } from './logger';

describe('createLogger', () => {
  const capture = () => {
    const lines: string[] = [];
    return { lines, out: { write: (line: string) => lines.push(line) } };
  };

  it('writes one JSON object a line with the level, time, identity and message', () => {
    const { lines, out } = capture();
    const log = createLogger('json', { identity: 'op-0', out });
    log.info('acquired lease rackside-operator');
    log.warn('lost lease rackside-operator: the renew deadline passed');
    log.error('boom');
    const entries = lines.map(l => JSON.parse(l));
    expect(entries.map(e => e.level)).toEqual(['info', 'warn', 'error']);
    expect(entries[0]).toMatchObject({
      component: 'rackside-operator',
      identity: 'op-0',
      msg: 'acquired lease rackside-operator',
    });
    expect(Number.isNaN(Date.parse(entries[0].time))).toBe(false);
  });

  it('writes text lines for people with --log-format text', () => {
    const { lines, out } = capture();
    createLogger('text', { out }).warn('stepping down');
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(
      /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z WARN {2}rackside-operator: stepping down\n$/,
    );
  });
});
