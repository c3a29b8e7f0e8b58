import { createPrivateKey } from 'node:crypto';
import { stringify } from 'yaml';
import { parseTalosEndpoint } from './endpoint';
import { normalizeTalosKey, parseTalosconfig } from './talosconfig';
import {
  TEST_ADMIN_CRT_PEM,
  TEST_ADMIN_KEY_TALOS_PEM,
  TEST_CA_PEM,
} from '../../testing';

const b64 = (text: string) => Buffer.from(text).toString('base64');

function talosconfig(overrides: Record<string, unknown> = {}) {
  return stringify({
    context: 'plant-a',
    contexts: {
      'plant-a': {
        endpoints: ['10.0.5.11', '10.0.5.12'],
        nodes: ['10.0.5.11', '10.0.5.21'],
        ca: b64(TEST_CA_PEM),
        crt: b64(TEST_ADMIN_CRT_PEM),
        key: b64(TEST_ADMIN_KEY_TALOS_PEM),
        ...overrides,
      },
      other: { endpoints: ['10.9.0.1'] },
    },
  });
}

describe('normalizeTalosKey', () => {
  it('relabels the Ed25519 PKCS#8 key so Node loads it', () => {
    expect(() => createPrivateKey(TEST_ADMIN_KEY_TALOS_PEM)).toThrow();
    const key = normalizeTalosKey(TEST_ADMIN_KEY_TALOS_PEM);
    expect(key).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
    expect(key).toMatch(/-----END PRIVATE KEY-----\n$/);
    expect(createPrivateKey(key).asymmetricKeyType).toBe('ed25519');
  });

  it('leaves other labels alone', () => {
    const pem =
      '-----BEGIN EC PRIVATE KEY-----\nAAAA\n-----END EC PRIVATE KEY-----\n';
    expect(normalizeTalosKey(pem)).toBe(pem);
  });
});

describe('parseTalosconfig', () => {
  it('reads the current context with base64 PEM fields', () => {
    const config = parseTalosconfig(talosconfig());
    expect(config.context).toBe('plant-a');
    expect(config.endpoints).toEqual(['10.0.5.11', '10.0.5.12']);
    expect(config.nodes).toEqual(['10.0.5.11', '10.0.5.21']);
    expect(config.identity.ca).toBe(TEST_CA_PEM);
    expect(config.identity.crt).toBe(TEST_ADMIN_CRT_PEM);
    expect(config.identity.key).toContain('-----BEGIN PRIVATE KEY-----');
  });

  it('accepts PEM text in place of base64', () => {
    const config = parseTalosconfig(
      talosconfig({ ca: TEST_CA_PEM, crt: TEST_ADMIN_CRT_PEM }),
    );
    expect(config.identity.ca).toBe(TEST_CA_PEM);
  });

  it('names a missing context and the ones there are', () => {
    expect(() =>
      parseTalosconfig(talosconfig(), { context: 'plant-z' }),
    ).toThrow(
      'talosconfig has no context "plant-z" (contexts: plant-a, other)',
    );
  });

  it('refuses a context without a client certificate', () => {
    expect(() => parseTalosconfig(talosconfig(), { context: 'other' })).toThrow(
      'talosconfig context "other" lacks ca, crt, key',
    );
  });

  it('refuses a broken key without quoting it', () => {
    const broken =
      '-----BEGIN PRIVATE KEY-----\nc2VjcmV0LWtleS1tYXRlcmlhbA==\n-----END PRIVATE KEY-----\n';
    let message = '';
    try {
      parseTalosconfig(talosconfig({ key: b64(broken) }));
    } catch (error) {
      message = (error as Error).message;
    }
    expect(message).toBe(
      'talosconfig context "plant-a": key is not a private key Node can load',
    );
    expect(message).not.toContain('c2VjcmV0');
  });

  it('refuses a field that is not PEM', () => {
    expect(() => parseTalosconfig(talosconfig({ crt: b64('hello') }))).toThrow(
      'talosconfig context "plant-a": crt is not base64 of a PEM block',
    );
  });

  it('refuses what is not a talosconfig', () => {
    expect(() => parseTalosconfig('- a\n- b\n')).toThrow(
      'talosconfig has no contexts',
    );
    expect(() => parseTalosconfig('contexts: {a: {}}\n')).toThrow(
      'talosconfig names no current context',
    );
    expect(() => parseTalosconfig('a: [\n')).toThrow(
      /^talosconfig is not YAML/,
    );
  });

  it('reads a talosconfig of 16,384 extra keys (128 KiB; a Secret may hold 1 MiB) in linear time, and still refuses a key given twice', () => {
    const extra = Array.from({ length: 16_384 }, (_, i) => `k${i}: v`).join(
      '\n',
    );
    const text = `${talosconfig()}${extra}\n`;
    // CPU time, not wall-clock: the bound is against a pathological path (seconds to
    // minutes), and a busy machine stretches the wall clock but not the work done.
    const started = process.cpuUsage();
    expect(parseTalosconfig(text).context).toBe('plant-a');
    const { user, system } = process.cpuUsage(started);
    expect((user + system) / 1000).toBeLessThan(1000);
    expect(() => parseTalosconfig(`${talosconfig()}context: other\n`)).toThrow(
      /^talosconfig is not YAML: Map keys must be unique/,
    );
    expect(() =>
      parseTalosconfig(`${talosconfig()}flow: {a: 1, b: 2, a: 3}\n`),
    ).toThrow(/^talosconfig is not YAML: Map keys must be unique/);
  });
});

describe('parseTalosEndpoint', () => {
  it.each([
    ['10.0.5.21', '10.0.5.21', 50000, '10.0.5.21:50000'],
    ['10.0.5.21:50001', '10.0.5.21', 50001, '10.0.5.21:50001'],
    ['node-1.plant', 'node-1.plant', 50000, 'node-1.plant:50000'],
    ['fd00::21', 'fd00::21', 50000, '[fd00::21]:50000'],
    ['[fd00::21]:50002', 'fd00::21', 50002, '[fd00::21]:50002'],
  ])('%s', (input, host, port, authority) => {
    expect(parseTalosEndpoint(input)).toEqual({ host, port, authority });
  });

  it.each(['', 'http://10.0.0.1', '10.0.0.1:0', '10.0.0.1:70000', 'a b'])(
    'refuses %j',
    input => {
      expect(() => parseTalosEndpoint(input)).toThrow(
        'is not a Talos API address',
      );
    },
  );
});
