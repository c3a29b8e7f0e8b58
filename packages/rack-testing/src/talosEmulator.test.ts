import http from 'node:http';
import net from 'node:net';
import type { AddressInfo } from 'node:net';
import type { RackInfo } from './rack';
import { startTrap, talosEmulator } from './talosEmulator';

/** A stand-in for the emulator's control API: answers /counts, records power calls. */
async function fakeControl() {
  const powered: Array<{ url: string; body: string }> = [];
  const server = http.createServer((req, res) => {
    let body = '';
    req.on('data', chunk => {
      body += chunk;
    });
    req.on('end', () => {
      if (req.url === '/counts') {
        res.setHeader('content-type', 'application/json');
        res.end(JSON.stringify({ 'uuid-1': { reboot: 2 } }));
      } else if (req.method === 'POST' && req.url?.endsWith('/power')) {
        powered.push({ url: req.url, body });
        res.end('{}');
      } else {
        res.statusCode = 404;
        res.end('no such machine');
      }
    });
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    powered,
    close: () => new Promise<void>(resolve => server.close(() => resolve())),
  };
}

const info = (controlUrl: string): RackInfo => ({
  dir: '/tmp/rack',
  net: 7,
  server: 'https://127.0.0.1:6443',
  kubeconfig: '/tmp/rack/kubeconfig',
  caFile: '/tmp/rack/ca.crt',
  talos: { controlUrl, talosconfigs: {}, caFiles: {} },
  machines: [
    { kind: 'node', node: 'worker-1', host: 11, address: 'a', uuid: 'uuid-1' },
    { kind: 'node', node: 'worker-2', host: 12, address: 'b', uuid: 'uuid-2' },
    { kind: 'spare', host: 13, address: 'c', uuid: 'uuid-3' },
  ],
});

describe('talosEmulator', () => {
  it('reads the counts of a node, with 0 for a verb never sent', async () => {
    const control = await fakeControl();
    try {
      const emulator = talosEmulator(info(control.url));
      expect(await emulator.powerCounts('worker-1')).toEqual({
        reboot: 2,
        shutdown: 0,
        powerOn: 0,
      });
      expect(await emulator.rebootsByNode()).toEqual({
        'worker-1': 2,
        'worker-2': 0,
      });
    } finally {
      await control.close();
    }
  });

  it("powers a node's machine through the control API", async () => {
    const control = await fakeControl();
    try {
      await talosEmulator(info(control.url)).power('worker-2', 'off');
      expect(control.powered).toEqual([
        { url: '/machines/uuid-2/power', body: '{"state":"off"}' },
      ]);
    } finally {
      await control.close();
    }
  });

  it('fails on a node the rack does not have, and on an answer that is not 2xx', async () => {
    const control = await fakeControl();
    try {
      const emulator = talosEmulator(info(control.url));
      expect(() => emulator.uuidOf('worker-9')).toThrow(/worker-9/);
      await expect(emulator.control('/machines/nope')).rejects.toThrow(
        /404 no such machine/,
      );
    } finally {
      await control.close();
    }
  });
});

describe('startTrap', () => {
  it('listens outside the machine network and counts what connects', async () => {
    const trap = await startTrap(info('http://unused'), 0);
    try {
      expect(trap.host).toBe('127.1.17.1');
      const { port } = trap;
      expect(trap.connections()).toBe(0);
      await new Promise<void>((resolve, reject) => {
        const socket = net.connect(port, trap.host);
        socket.on('close', () => resolve());
        // The trap closes what it gets: a reset is what the caller may see.
        socket.on('error', () => undefined);
        socket.on('timeout', () => reject(new Error('no answer')));
      });
      expect(trap.connections()).toBe(1);
    } finally {
      await trap.close();
    }
  });
});
