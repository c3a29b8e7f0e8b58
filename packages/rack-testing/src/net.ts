import fs from 'node:fs';
import path from 'node:path';

/**
 * The loopback networks (`127.0.<10+net>.x`) Jest's rack suites claim from: 1 to 99. The
 * node --test suites take the networks above (the plan is in e2e/rack/lib/net.mjs), and
 * scripts/test.sh runs Jest's rack suites beside the browser tests, benches and install
 * guide, so the two never share a network.
 */
export const MIN_NET = 1;
export const MAX_NET = 99;

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/**
 * Claims a rack network number no other live process holds, so Jest workers
 * running in parallel never put two Talos emulators on the same addresses.
 * A lock whose owner died is taken over.
 */
export function claimNet(lockDir: string): { net: number; release(): void } {
  fs.mkdirSync(lockDir, { recursive: true });
  const start = MIN_NET + (process.pid % (MAX_NET - MIN_NET + 1));
  for (let i = 0; i <= MAX_NET - MIN_NET; i++) {
    const net = MIN_NET + ((start - MIN_NET + i) % (MAX_NET - MIN_NET + 1));
    const file = path.join(lockDir, `${net}.lock`);
    try {
      fs.writeFileSync(file, String(process.pid), { flag: 'wx' });
    } catch {
      const owner = Number(fs.readFileSync(file, 'utf8').trim());
      if (owner && alive(owner)) continue;
      fs.writeFileSync(file, String(process.pid));
    }
    return {
      net,
      release: () => fs.rmSync(file, { force: true }),
    };
  }
  throw new Error(`no free rack network in ${lockDir}`);
}
