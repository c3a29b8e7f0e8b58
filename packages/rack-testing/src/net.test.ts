import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { claimNet } from './net';

describe('claimNet', () => {
  it('never hands the same network to two holders, and reuses released ones', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nets-'));
    const a = claimNet(dir);
    const b = claimNet(dir);
    expect(a.net).not.toBe(b.net);
    a.release();
    const c = claimNet(dir);
    expect(c.net).toBe(a.net);
  });

  it('takes over a lock whose owner has died', () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'nets-'));
    const first = claimNet(dir);
    // A pid far above pid_max cannot be alive.
    fs.writeFileSync(path.join(dir, `${first.net}.lock`), '999999999');
    expect(claimNet(dir).net).toBe(first.net);
  });
});
