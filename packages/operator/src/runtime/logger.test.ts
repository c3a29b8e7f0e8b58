import { createLogger, reconcileErrorFields } from './logger';

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

  it('puts the fields of a line about an object on it, in JSON and in text', () => {
    const json = capture();
    createLogger('json', { out: json.out }).info(
      'NodeMaintenance m1: Cordoned',
      {
        kind: 'NodeMaintenance',
        name: 'm1',
        namespace: undefined,
        phase: 'Cordoned',
        reason: 'Cordoned',
      },
    );
    const entry = JSON.parse(json.lines[0]);
    expect(entry).toMatchObject({
      level: 'info',
      kind: 'NodeMaintenance',
      name: 'm1',
      phase: 'Cordoned',
      reason: 'Cordoned',
    });
    // An undefined field is left out, not written as null.
    expect('namespace' in entry).toBe(false);

    const text = capture();
    createLogger('text', { out: text.out }).error('reconcile failed', {
      kind: 'TalosMachine',
      name: 'm-1',
      namespace: 'rackside-system',
    });
    expect(text.lines[0]).toMatch(
      / ERROR rackside-operator: reconcile failed kind="TalosMachine" name="m-1" namespace="rackside-system"\n$/,
    );
  });

  it('drops the lines below --log-level', () => {
    const { lines, out } = capture();
    const log = createLogger('json', { level: 'warn', out });
    log.debug('d');
    log.info('i');
    log.warn('w');
    log.log('e', { level: 'error', kind: 'NodeMaintenance' });
    log.log('i2');
    expect(lines.map(l => JSON.parse(l).msg)).toEqual(['w', 'e']);
    const debug = capture();
    createLogger('json', { level: 'debug', out: debug.out }).debug('d');
    expect(debug.lines).toHaveLength(1);
  });
});

describe('reconcileErrorFields', () => {
  it('splits the key, keeps the phase, and takes the reason from the apiserver', () => {
    const conflict = Object.assign(new Error('the object has been modified'), {
      status: { reason: 'Conflict', code: 409 },
    });
    expect(
      reconcileErrorFields(
        'TalosMachine',
        'rackside-system/m-1',
        conflict,
        'Joining',
      ),
    ).toEqual({
      level: 'error',
      kind: 'TalosMachine',
      name: 'm-1',
      namespace: 'rackside-system',
      phase: 'Joining',
      reason: 'Conflict',
    });
    const apiException = Object.assign(new Error('HTTP-Code: 403'), {
      body: JSON.stringify({ reason: 'Forbidden' }),
    });
    expect(
      reconcileErrorFields('NodeMaintenance', 'm1', apiException),
    ).toMatchObject({ name: 'm1', namespace: undefined, reason: 'Forbidden' });
    expect(
      reconcileErrorFields('NodeMaintenance', 'm1', new TypeError('x')).reason,
    ).toBe('TypeError');
    expect(
      reconcileErrorFields('NodeMaintenance', 'm1', new Error('x')).reason,
    ).toBe('ReconcileError');
  });
});
