/**
 * The one way Rackside reads an answer from outside the cluster (a BMC, Alertmanager):
 * streamed, refused past a byte cap, and given up at a deadline, so a hostile or broken
 * peer can neither grow the process's memory without bound nor hold a caller forever
 * (docs/limits.md; a BMC's caps and deadlines: docs/hardware-health.md, "Limits").
 * Nothing else calls `.text()`, `.json()` or `.arrayBuffer()` on such a response; the lint
 * rule in scripts/eslint/outsideInput.js keeps it so.
 */

/** A body the reader refused or could not finish. */
export class BoundedReadError extends Error {
  /** What was read, e.g. "Redfish BMC https://10.0.5.21: GET /redfish/v1/Systems/1". */
  readonly source: string;
  /** Why: past the byte cap, past the deadline, or the stream broke. */
  readonly reason: 'tooLarge' | 'deadline' | 'broken';
  /** The cap, for `tooLarge`. */
  readonly limitBytes?: number;

  constructor(options: {
    source: string;
    reason: BoundedReadError['reason'];
    message: string;
    limitBytes?: number;
    cause?: unknown;
  }) {
    super(
      options.message,
      options.cause === undefined ? undefined : { cause: options.cause },
    );
    this.name = 'BoundedReadError';
    this.source = options.source;
    this.reason = options.reason;
    this.limitBytes = options.limitBytes;
  }
}

/** The parts of a fetch Response (undici's or the global one) the reader uses. */
export interface StreamingResponse {
  headers: { get(name: string): string | null };
  /** A byte stream (undici types its Response's as `ReadableStream<any>`). */
  body: {
    getReader(): ReadableStreamDefaultReader<Uint8Array>;
    cancel(reason?: unknown): Promise<void>;
  } | null;
}

/** How one answer is read. */
export interface BodyLimits {
  /** Names the answer in errors (never a credential). */
  source: string;
  /** The cap in bytes; a body past it is refused as soon as the cap is passed. */
  maxBytes: number;
  /**
   * Aborts the read (the request's own deadline, a whole reading's deadline). The same
   * signal given to fetch aborts the stream; it is also checked between chunks, so a
   * body stream that ignores it still ends.
   */
  signal?: AbortSignal;
}

/** A byte count for a message: "1,048,576 bytes (1 MiB)". */
export function byteText(bytes: number): string {
  const mib = bytes / (1024 * 1024);
  const human =
    mib >= 1 ? `${+mib.toFixed(1)} MiB` : `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes.toLocaleString('en-US')} bytes (${human})`;
}

function deadlineError(source: string, signal: AbortSignal): BoundedReadError {
  const why = signal.reason as Error | undefined;
  return new BoundedReadError({
    source,
    reason: 'deadline',
    message: `${source}: the answer did not arrive in time (${
      why?.message ?? 'aborted'
    })`,
    cause: why,
  });
}

/**
 * Reads a response's body as bytes, refusing it past `maxBytes` (at once when the
 * Content-Length says so, else when the streamed total passes it) and at the signal.
 * The stream is cancelled on refusal, so the connection is not drained.
 */
export async function readBoundedBytes(
  response: StreamingResponse,
  limits: BodyLimits,
): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  const total = await streamBounded(response, limits, chunk => {
    chunks.push(chunk);
  });
  const out = new Uint8Array(total);
  let at = 0;
  for (const chunk of chunks) {
    out.set(chunk, at);
    at += chunk.byteLength;
  }
  return out;
}

/**
 * Hands a response's body to `onChunk` as it streams in, under the same cap and signal
 * as {@link readBoundedBytes}, keeping none of it (a firmware image's checksum is computed
 * this way, never holding the image). Answers the number of bytes read.
 */
export async function streamBounded(
  response: StreamingResponse,
  limits: BodyLimits,
  onChunk: (chunk: Uint8Array) => void,
): Promise<number> {
  const { source, maxBytes, signal } = limits;
  const tooLarge = (seen: string) =>
    new BoundedReadError({
      source,
      reason: 'tooLarge',
      limitBytes: maxBytes,
      message: `${source}: the answer is larger than the limit of ${byteText(
        maxBytes,
      )} (${seen}); not read`,
    });
  const declared = Number(response.headers.get('content-length') ?? NaN);
  const stream = response.body;
  if (Number.isFinite(declared) && declared > maxBytes) {
    await stream?.cancel().catch(() => undefined);
    throw tooLarge(`Content-Length ${declared}`);
  }
  if (!stream) return 0;
  const reader = stream.getReader();
  let total = 0;
  const onAbort = () => {
    reader.cancel().catch(() => undefined);
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  try {
    for (;;) {
      if (signal?.aborted) throw deadlineError(source, signal);
      let next: ReadableStreamReadResult<Uint8Array>;
      try {
        next = await reader.read();
      } catch (error) {
        if (signal?.aborted) throw deadlineError(source, signal);
        throw new BoundedReadError({
          source,
          reason: 'broken',
          message: `${source}: the answer broke off: ${
            (error as Error)?.message ?? String(error)
          }`,
          cause: error,
        });
      }
      if (next.done) break;
      // A cancel on abort resolves the pending read as done: not a complete body.
      if (signal?.aborted) throw deadlineError(source, signal);
      total += next.value.byteLength;
      if (total > maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw tooLarge(`more than ${total} bytes sent`);
      }
      onChunk(next.value);
    }
    if (signal?.aborted) throw deadlineError(source, signal);
  } finally {
    signal?.removeEventListener('abort', onAbort);
    reader.releaseLock();
  }
  return total;
}

/** {@link readBoundedBytes} decoded as UTF-8 text. */
export async function readBoundedText(
  response: StreamingResponse,
  limits: BodyLimits,
): Promise<string> {
  return new TextDecoder().decode(await readBoundedBytes(response, limits));
}

/**
 * {@link readBoundedText} parsed as JSON; an empty body is `undefined`. A body that is not
 * JSON throws a BoundedReadError with reason `broken` naming the source.
 */
export async function readBoundedJson(
  response: StreamingResponse,
  limits: BodyLimits,
): Promise<unknown> {
  const text = await readBoundedText(response, limits);
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    throw new BoundedReadError({
      source: limits.source,
      reason: 'broken',
      message: `${limits.source}: the answer is not JSON`,
    });
  }
}

/**
 * A deadline over several requests (a whole BMC reading): its signal aborts every request
 * given it once `ms` have passed. `signalFor(requestMs)` combines it with one request's
 * own deadline.
 */
export class Deadline {
  readonly signal: AbortSignal;
  readonly #ms: number;
  readonly #timer: ReturnType<typeof setTimeout>;

  constructor(ms: number, what: string) {
    if (!Number.isFinite(ms) || ms <= 0) {
      throw new RangeError(
        `the deadline of ${what} must be a positive number of milliseconds, not ${ms}`,
      );
    }
    this.#ms = ms;
    const controller = new AbortController();
    this.#timer = setTimeout(
      () =>
        controller.abort(
          new Error(`${what} passed its deadline of ${ms / 1000} s`),
        ),
      ms,
    );
    this.#timer.unref?.();
    this.signal = controller.signal;
  }

  /** Ends the timer once the work is done (a sweep of many BMCs leaves none behind). */
  clear(): void {
    clearTimeout(this.#timer);
  }

  /** The deadline in milliseconds. */
  get ms(): number {
    return this.#ms;
  }

  /** This deadline and one request's own, whichever comes first. */
  signalFor(requestMs: number): AbortSignal {
    return AbortSignal.any([this.signal, AbortSignal.timeout(requestMs)]);
  }
}
