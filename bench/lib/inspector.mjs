// CPU profiles of a window of another Node process's life, through its inspector (the
// process runs with --inspect=127.0.0.1:0 and prints "Debugger listening on ws://...").
import fs from 'node:fs';

/** A Chrome DevTools Protocol session over the inspector's WebSocket. */
export async function connectInspector(url) {
  const ws = new WebSocket(url);
  await new Promise((resolve, reject) => {
    ws.addEventListener('open', resolve, { once: true });
    ws.addEventListener(
      'error',
      () => reject(new Error(`cannot reach ${url}`)),
      { once: true },
    );
  });
  let next = 1;
  const pending = new Map();
  ws.addEventListener('message', event => {
    const msg = JSON.parse(String(event.data));
    const p = msg.id && pending.get(msg.id);
    if (!p) return;
    pending.delete(msg.id);
    if (msg.error) p.reject(new Error(`${p.method}: ${msg.error.message}`));
    else p.resolve(msg.result);
  });
  return {
    send(method, params = {}) {
      const id = next++;
      ws.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) =>
        pending.set(id, { resolve, reject, method }),
      );
    },
    close: () => ws.close(),
  };
}

/**
 * The inspector session of the process whose argv contains `argvPart`, among the
 * "Debugger listening on" URLs a log file shows.
 */
export async function inspectorOf(logFile, argvPart) {
  const urls = [
    ...fs
      .readFileSync(logFile, 'utf8')
      .matchAll(/Debugger listening on (ws:\/\/\S+)/g),
  ].map(m => m[1]);
  for (const url of urls.reverse()) {
    let session;
    try {
      session = await connectInspector(url);
      const { result } = await session.send('Runtime.evaluate', {
        expression: 'process.argv.join(" ")',
        returnByValue: true,
      });
      if (String(result.value).includes(argvPart)) return session;
      session.close();
    } catch {
      session?.close();
    }
  }
  throw new Error(`no inspector of a process with ${argvPart} in ${logFile}`);
}

/** Starts sampling; `stop(file)` writes the .cpuprofile and returns its path. */
export async function startCpuProfile(session, { intervalUs = 500 } = {}) {
  await session.send('Profiler.enable');
  await session.send('Profiler.setSamplingInterval', { interval: intervalUs });
  await session.send('Profiler.start');
  return {
    async stop(file) {
      const { profile } = await session.send('Profiler.stop');
      fs.writeFileSync(file, JSON.stringify(profile));
      return file;
    },
  };
}

/**
 * Starts a histogram of the process's event-loop delay (perf_hooks, 10 ms resolution);
 * `stop()` returns its mean, p50, p99 and max in ms: how long a request that arrived
 * had to wait before the process could look at it.
 */
export async function startEventLoopDelay(session) {
  const evaluate = async expression => {
    const { result, exceptionDetails } = await session.send(
      'Runtime.evaluate',
      {
        expression,
        returnByValue: true,
      },
    );
    if (exceptionDetails)
      throw new Error(`event-loop delay: ${exceptionDetails.text}`);
    return result.value;
  };
  await evaluate(`(() => {
    const { monitorEventLoopDelay } = process.getBuiltinModule('node:perf_hooks');
    globalThis.__benchLoopDelay?.disable();
    globalThis.__benchLoopDelay = monitorEventLoopDelay({ resolution: 10 });
    globalThis.__benchLoopDelay.enable();
  })()`);
  return {
    stop: () =>
      evaluate(`(() => {
        const h = globalThis.__benchLoopDelay;
        h.disable();
        const ms = ns => ns / 1e6;
        return { mean: ms(h.mean), p50: ms(h.percentile(50)), p99: ms(h.percentile(99)), max: ms(h.max) };
      })()`),
  };
}
