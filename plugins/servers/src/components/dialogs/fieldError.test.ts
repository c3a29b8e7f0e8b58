import { fieldErrorOf } from './fieldError';

describe('fieldErrorOf', () => {
  const bad = (message: string) => ({ status: 400, message } as any);

  it('gives a 400 that names the field first or after a prefix, as a whole word', () => {
    expect(fieldErrorOf(bad('reason: too short'), 'reason')).toBe(
      'reason: too short',
    );
    expect(
      fieldErrorOf(bad('invalid request body: reason: too short'), 'reason'),
    ).toBe('invalid request body: reason: too short');
    expect(fieldErrorOf(bad('reasons: too many'), 'reason')).toBeUndefined();
    expect(
      fieldErrorOf(bad('invalid request body: reasonable: no'), 'reason'),
    ).toBeUndefined();
    expect(fieldErrorOf(bad('the reason is short'), 'reason')).toBeUndefined();
  });

  it('takes a field name with pattern characters literally', () => {
    expect(fieldErrorOf(bad('a.b: wrong'), 'a.b')).toBe('a.b: wrong');
    expect(fieldErrorOf(bad('axb: wrong'), 'a.b')).toBeUndefined();
  });

  it('gives nothing for another status', () => {
    expect(
      fieldErrorOf({ status: 409, message: 'reason: x' } as any, 'reason'),
    ).toBeUndefined();
  });
});
