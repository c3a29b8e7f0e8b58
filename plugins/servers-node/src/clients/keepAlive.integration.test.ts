/*
 * Against the rack's real apiserver: the clients of one cluster make one TLS connection
 * for many sequential requests (gets, lists and patches, two clients built from two
 * KubeConfig objects with the same client certificate), counted on the client as the
 * `secureConnect` events of the sockets tls.connect opens.
 */
import type { KubeConfig } from '@kubernetes/client-node';
import { startTestRack, type TestRack } from '@rackside/rack-testing';
import tls from 'node:tls';
import { CoreClient } from './core';

jest.setTimeout(60_000);

let rack: TestRack;
let admin: KubeConfig;
let handshakes = 0;
const connect = tls.connect;

beforeAll(async () => {
  rack = await startTestRack({
    withTalos: false,
    withRedfish: false,
    withWorkloads: false,
  });
  admin = rack.adminKubeConfig();
  jest.spyOn(tls, 'connect').mockImplementation(((...args: any[]) => {
    const socket = (connect as any).apply(tls, args);
    socket.once('secureConnect', () => handshakes++);
    return socket;
  }) as typeof tls.connect);
});

afterAll(async () => {
  jest.restoreAllMocks();
  await rack?.stop();
});

it('60 sequential reads and writes of two clients make one TLS handshake', async () => {
  handshakes = 0;
  const nodes = await new CoreClient(admin).nodes.list();
  const name = nodes.items[0].metadata!.name!;
  // The first request opened the connection (so the count sees connections at all).
  expect(handshakes).toBe(1);
  const a = new CoreClient(admin);
  const b = new CoreClient(rack.adminKubeConfig());
  for (let i = 0; i < 20; i++) {
    expect((await a.nodes.get(name)).metadata?.name).toBe(name);
    await b.nodes.patch(name, {
      metadata: { labels: { 'test.rackside.dev/keepalive': String(i) } },
    });
    expect((await b.nodes.list()).items.length).toBe(nodes.items.length);
  }
  const got = await a.nodes.get(name);
  expect(got.metadata?.labels?.['test.rackside.dev/keepalive']).toBe('19');
  expect(handshakes).toBe(1);
});
