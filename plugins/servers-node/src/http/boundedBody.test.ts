import {
  BoundedReadError,
  byteText,
  Deadline,
  readBoundedBytes,
  readBoundedJson,
  readBoundedText,
} from './boundedBody';

/** A response whose body is `chunks`, then (unless `end: false`) its end; records a cancel. */
function responseOf(
  chunks: Array<string | Uint8Array>,
  options: { contentLength?: number; end?: boolean; failWith?: Error } = {},
) {
  const state = { cancelled: false, pulled: 0 };
  const encoder = new TextEncoder();
  let at = 0;
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (at < chunks.length) {
        const chunk = chunks[at++];
        state.pulled++;
        controller.enqueue(
          typeof chunk === 'string' ? encoder.encode(chunk) : chunk,
        );
        return undefined;
      }
      if (options.failWith) {
        controller.error(options.failWith);
        return undefined;
      }
      if (options.end === false) return new Promise<void>(() => {});
      controller.close();
      return undefined;
    },
    cancel() {
      state.cancelled = true;
    },
  });
  const headers = new Headers();
  if (options.contentLength !== undefined) {
    headers.set('content-length', String(options.contentLength));
  }
  return { response: { headers, body }, state };
}

const SOURCE = 'Redfish BMC https://10.0.5.21: GET /redfish/v1/Systems/1';

describe('readBoundedBytes', () => {
  it('reads a body within the cap', async () => {
    const { response } = responseOf(['{"a":', '1}']);
    await expect(
      readBoundedJson(response, { source: SOURCE, maxBytes: 100 }),
    ).resolves.toEqual({ a: 1 });
  });

  it('refuses a declared Content-Length past the cap before reading a byte, and cancels the stream', async () => {
    const { response, state } = responseOf(['x'], { contentLength: 5000 });
    const error = (await readBoundedBytes(response, {
      source: SOURCE,
      maxBytes: 1024,
    }).catch(e => e)) as BoundedReadError;
    expect(error).toBeInstanceOf(BoundedReadError);
    expect(error).toMatchObject({
      source: SOURCE,
      reason: 'tooLarge',
      limitBytes: 1024,
    });
    expect(error.message).toBe(
      `${SOURCE}: the answer is larger than the limit of 1,024 bytes (1 KiB) (Content-Length 5000); not read`,
    );
    expect(state.pulled).toBe(0);
    expect(state.cancelled).toBe(true);
  });

  it('refuses a body that lies about its length (declares 10, streams more than the cap), as soon as the cap is passed', async () => {
    const chunk = 'x'.repeat(400);
    const { response, state } = responseOf(Array(100).fill(chunk), {
      contentLength: 10,
    });
    const error = await readBoundedText(response, {
      source: SOURCE,
      maxBytes: 1000,
    }).catch(e => e);
    expect(error).toMatchObject({ reason: 'tooLarge', limitBytes: 1000 });
    // Refused at the third chunk (the stream pulls one ahead): the rest was never pulled.
    expect(state.pulled).toBeLessThanOrEqual(4);
    expect(state.cancelled).toBe(true);
  });

  it('gives up a stream that stalls after its first bytes at the signal', async () => {
    const { response, state } = responseOf(['{"Id":'], { end: false });
    const controller = new AbortController();
    const reading = readBoundedJson(response, {
      source: SOURCE,
      maxBytes: 1000,
      signal: controller.signal,
    });
    controller.abort(new Error('the reading passed its deadline of 3 s'));
    const error = (await reading.catch(e => e)) as BoundedReadError;
    expect(error).toMatchObject({ reason: 'deadline' });
    expect(error.message).toBe(
      `${SOURCE}: the answer did not arrive in time (the reading passed its deadline of 3 s)`,
    );
    expect(state.cancelled).toBe(true);
  });

  it('a broken stream is "broken", naming the source', async () => {
    const { response } = responseOf(['{'], {
      failWith: new Error('socket hang up'),
    });
    await expect(
      readBoundedBytes(response, { source: SOURCE, maxBytes: 100 }),
    ).rejects.toMatchObject({
      reason: 'broken',
      message: `${SOURCE}: the answer broke off: socket hang up`,
    });
  });

  it('a body that is not JSON is "broken"; an empty one is undefined', async () => {
    await expect(
      readBoundedJson(responseOf(['<html>']).response, {
        source: SOURCE,
        maxBytes: 100,
      }),
    ).rejects.toMatchObject({
      reason: 'broken',
      message: `${SOURCE}: the answer is not JSON`,
    });
    await expect(
      readBoundedJson(responseOf([]).response, {
        source: SOURCE,
        maxBytes: 100,
      }),
    ).resolves.toBeUndefined();
  });

  it('counts bytes, not characters', async () => {
    const { response } = responseOf(['é'.repeat(60)]);
    await expect(
      readBoundedText(response, { source: SOURCE, maxBytes: 100 }),
    ).rejects.toMatchObject({ reason: 'tooLarge' });
  });
});

describe('byteText', () => {
  it.each([
    [1024, '1,024 bytes (1 KiB)'],
    [1024 * 1024, '1,048,576 bytes (1 MiB)'],
    [4 * 1024 * 1024, '4,194,304 bytes (4 MiB)'],
  ])('%i is %s', (bytes, text) => expect(byteText(bytes)).toBe(text));
});

describe('Deadline', () => {
  it('aborts its signal with a reason naming what passed it', async () => {
    const deadline = new Deadline(20, 'the health reading of BMC x');
    await new Promise(resolve =>
      deadline.signal.addEventListener('abort', resolve),
    );
    expect((deadline.signal.reason as Error).message).toBe(
      'the health reading of BMC x passed its deadline of 0.02 s',
    );
  });

  it('signalFor: the request deadline when it comes first', async () => {
    const deadline = new Deadline(60_000, 'a reading');
    const signal = deadline.signalFor(10);
    await new Promise(resolve => signal.addEventListener('abort', resolve));
    expect(deadline.signal.aborted).toBe(false);
    deadline.clear();
  });

  it('clear() stops it from firing', async () => {
    const deadline = new Deadline(10, 'a reading');
    deadline.clear();
    const later = new Deadline(40, 'the witness');
    await new Promise(resolve =>
      later.signal.addEventListener('abort', resolve),
    );
    expect(deadline.signal.aborted).toBe(false);
  });

  it.each([0, -1, Number.NaN, Infinity])('refuses %s ms', ms => {
    expect(() => new Deadline(ms, 'a reading')).toThrow(
      /the deadline of a reading must be a positive number of milliseconds/,
    );
  });
});
