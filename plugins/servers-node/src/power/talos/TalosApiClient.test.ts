/*
 * The Talos client against an in-process gRPC server that speaks the same definitions
 * (their numbers are checked against the official descriptor in protocol.test.ts): what
 * each call puts on the wire, how answers and errors come back, and how the power
 * channel classifies failures. TLS and the real emulator are in the rack test.
 */
import {
  credentials,
  Server,
  ServerCredentials,
  status,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
  type MethodDefinition,
  type ServiceDefinition,
} from '@grpc/grpc-js';
import { PowerChannelError } from '../types';
import { method, messageType, SYSTEM_INFORMATION } from './protocol';
import { TalosApiClient, TalosApiError } from './TalosApiClient';
import { TalosPowerChannel } from './TalosPowerChannel';
import { parseTalosconfig } from './talosconfig';
import {
  TEST_ADMIN_CRT_PEM,
  TEST_ADMIN_KEY_TALOS_PEM,
  TEST_CA_PEM,
} from '../../testing';

type Plain = Record<string, any>;
type Handler = (request: Plain) => Plain | Promise<Plain>;

const TO_OBJECT = { longs: String, enums: String, defaults: true } as const;

/** A fake machine: records every call, answers with the handler given per method. */
class FakeTalos {
  readonly calls: Array<{ method: string; request: Plain }> = [];
  handlers: Record<string, Handler> = {};
  readChunks: string[] = [];
  private server = new Server();
  port = 0;

  async start() {
    const service: Record<string, MethodDefinition<Plain, Plain>> = {};
    const unary = (svc: string, name: string) => {
      const m = method(svc, name);
      service[name] = {
        path: m.path,
        requestStream: false,
        responseStream: false,
        requestSerialize: (v: Plain) =>
          Buffer.from(
            m.requestType.encode(m.requestType.fromObject(v)).finish(),
          ),
        requestDeserialize: (b: Buffer) =>
          m.requestType.toObject(m.requestType.decode(b), TO_OBJECT),
        responseSerialize: (v: Plain) =>
          Buffer.from(
            m.responseType.encode(m.responseType.fromObject(v)).finish(),
          ),
        responseDeserialize: (b: Buffer) => m.responseType.decode(b),
      };
    };
    for (const name of [
      'Version',
      'Reboot',
      'Shutdown',
      'Reset',
      'Upgrade',
      'ApplyConfiguration',
      'EtcdMemberList',
    ]) {
      unary('machine.MachineService', name);
    }
    const read = method('machine.MachineService', 'Read');
    service.Read = {
      ...service.Version,
      path: read.path,
      responseStream: true,
      requestDeserialize: (b: Buffer) =>
        read.requestType.toObject(read.requestType.decode(b), TO_OBJECT),
      responseSerialize: (v: Plain) =>
        Buffer.from(
          read.responseType.encode(read.responseType.fromObject(v)).finish(),
        ),
    };
    const impl: Record<string, any> = {};
    for (const name of Object.keys(service).filter(n => n !== 'Read')) {
      impl[name] = (
        call: ServerUnaryCall<Plain, Plain>,
        cb: sendUnaryData<Plain>,
      ) => this.answer(name, call.request, cb);
    }
    impl.Read = (call: ServerWritableStream<Plain, Plain>) => {
      this.calls.push({ method: 'Read', request: call.request });
      for (const chunk of this.readChunks)
        call.write({ bytes: Buffer.from(chunk) });
      call.end();
    };
    this.server.addService(service as ServiceDefinition, impl);

    const cosiGet = method('cosi.resource.State', 'Get');
    const cosi: ServiceDefinition = {
      Get: {
        ...service.Version,
        path: cosiGet.path,
        requestDeserialize: (b: Buffer) =>
          cosiGet.requestType.toObject(
            cosiGet.requestType.decode(b),
            TO_OBJECT,
          ),
        responseSerialize: (v: Plain) =>
          Buffer.from(
            cosiGet.responseType
              .encode(cosiGet.responseType.fromObject(v))
              .finish(),
          ),
      },
    };
    this.server.addService(cosi, {
      Get: (call: ServerUnaryCall<Plain, Plain>, cb: sendUnaryData<Plain>) =>
        this.answer('Get', call.request, cb),
    });
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync(
        '127.0.0.1:0',
        ServerCredentials.createInsecure(),
        (error, port) => (error ? reject(error) : resolve(port)),
      ),
    );
  }

  private async answer(name: string, request: Plain, cb: sendUnaryData<Plain>) {
    this.calls.push({ method: name, request });
    const handler = this.handlers[name];
    if (!handler) {
      cb({
        code: status.UNIMPLEMENTED,
        details: `method ${name} not implemented`,
      });
      return;
    }
    try {
      cb(null, await handler(request));
    } catch (error) {
      cb(error as any);
    }
  }

  count(name: string) {
    return this.calls.filter(c => c.method === name).length;
  }

  stop() {
    return new Promise<void>(resolve =>
      this.server.tryShutdown(() => resolve()),
    );
  }
}

const insecure = { channelCredentials: credentials.createInsecure() };

describe('TalosApiClient', () => {
  const fake = new FakeTalos();
  let client: TalosApiClient;

  beforeAll(async () => {
    await fake.start();
    client = new TalosApiClient(
      `127.0.0.1:${fake.port}`,
      { mode: 'maintenance' },
      {
        ...insecure,
        timeoutMs: 2000,
      },
    );
  });
  afterAll(async () => {
    client.close();
    await fake.stop();
  });
  beforeEach(() => {
    fake.calls.length = 0;
    fake.handlers = {};
  });

  it('reads Version', async () => {
    fake.handlers.Version = () => ({
      messages: [
        {
          version: { tag: 'v1.13.9', sha: 'abc', os: 'linux', arch: 'amd64' },
          platform: { name: 'metal', mode: 'metal' },
        },
      ],
    });
    await expect(client.version()).resolves.toEqual({
      tag: 'v1.13.9',
      sha: 'abc',
      os: 'linux',
      arch: 'amd64',
      platform: 'metal',
    });
  });

  it('sends Reboot once, mode DEFAULT, and returns the actor', async () => {
    fake.handlers.Reboot = () => ({ messages: [{ actorId: 'actor-1' }] });
    await expect(client.reboot()).resolves.toEqual({ actorId: 'actor-1' });
    expect(fake.calls).toEqual([
      { method: 'Reboot', request: { mode: 'DEFAULT' } },
    ]);
  });

  it('sends Shutdown, graceful unless forced', async () => {
    fake.handlers.Shutdown = () => ({ messages: [{ actorId: 'a' }] });
    await client.shutdown();
    await client.shutdown({ force: true });
    expect(fake.calls.map(c => c.request)).toEqual([
      { force: false },
      { force: true },
    ]);
  });

  it('sends Reset graceful, with reboot, wiping STATE and EPHEMERAL of the system disk', async () => {
    fake.handlers.Reset = () => ({ messages: [{ actorId: 'r' }] });
    await expect(client.reset()).resolves.toEqual({ actorId: 'r' });
    expect(fake.calls[0].request).toEqual({
      graceful: true,
      reboot: true,
      systemPartitionsToWipe: [
        { label: 'STATE', wipe: true },
        { label: 'EPHEMERAL', wipe: true },
      ],
      mode: 'SYSTEM_DISK',
    });
  });

  it('sends Upgrade once with the image, preserving data, staged and forced only when asked', async () => {
    fake.handlers.Upgrade = () => ({
      messages: [{ ack: 'Upgrade request received', actorId: 'u-1' }],
    });
    await expect(
      client.upgrade({ image: 'factory.talos.dev/installer/s:v1.12.0' }),
    ).resolves.toEqual({ actorId: 'u-1' });
    await client.upgrade({ image: 'r/i:v1', stage: true, force: true });
    expect(fake.calls).toEqual([
      {
        method: 'Upgrade',
        request: {
          image: 'factory.talos.dev/installer/s:v1.12.0',
          preserve: true,
          stage: false,
          force: false,
        },
      },
      {
        method: 'Upgrade',
        request: { image: 'r/i:v1', preserve: true, stage: true, force: true },
      },
    ]);
  });

  it('sends ApplyConfiguration with mode AUTO and the bytes of the config', async () => {
    fake.handlers.ApplyConfiguration = () => ({
      messages: [{ mode: 'REBOOT', modeDetails: 'install', warnings: ['w'] }],
    });
    await expect(
      client.applyConfiguration('version: v1alpha1\n'),
    ).resolves.toEqual({
      mode: 'REBOOT',
      modeDetails: 'install',
      warnings: ['w'],
    });
    const request = fake.calls[0].request;
    expect(request.mode).toBe('AUTO');
    expect(request.dryRun).toBe(false);
    expect(Buffer.from(request.data).toString()).toBe('version: v1alpha1\n');
  });

  it('lists etcd members with 64-bit IDs intact', async () => {
    fake.handlers.EtcdMemberList = () => ({
      messages: [
        {
          members: [
            {
              id: '13075081746155141178',
              hostname: 'cp-2',
              peerUrls: ['https://10.0.5.12:2380'],
              clientUrls: ['https://10.0.5.12:2379'],
            },
          ],
        },
      ],
    });
    await expect(client.etcdMemberList()).resolves.toEqual([
      {
        id: '13075081746155141178',
        hostname: 'cp-2',
        peerUrls: ['https://10.0.5.12:2380'],
        clientUrls: ['https://10.0.5.12:2379'],
        isLearner: false,
      },
    ]);
  });

  it('reads the SMBIOS UUID from the SystemInformation resource', async () => {
    const spec = messageType(SYSTEM_INFORMATION.specType);
    fake.handlers.Get = () => ({
      resource: {
        metadata: {
          namespace: 'hardware',
          type: SYSTEM_INFORMATION.type,
          id: 'systeminformation',
        },
        spec: {
          protoSpec: Buffer.from(
            spec
              .encode({ uuid: '4C4C4544-0031-3810-8044-B1C04F4D3232' })
              .finish(),
          ),
          yamlSpec: 'uuid: 4C4C4544-0031-3810-8044-B1C04F4D3232\n',
        },
      },
    });
    await expect(client.systemUUID()).resolves.toBe(
      '4c4c4544-0031-3810-8044-b1c04f4d3232',
    );
    expect(fake.calls[0].request).toEqual({
      namespace: 'hardware',
      type: 'SystemInformations.hardware.talos.dev',
      id: 'systeminformation',
      options: {},
    });
  });

  it('refuses a SystemInformation without a protobuf spec', async () => {
    fake.handlers.Get = () => ({ resource: { spec: { yamlSpec: 'uuid: x' } } });
    await expect(client.systemUUID()).rejects.toThrow(
      'came without a protobuf spec',
    );
  });

  it('reads the boot ID through Read, across chunks', async () => {
    fake.readChunks = ['0f3c9a52-6b1e-4c', '2e-9d77-1a2b3c4d5e6f\n'];
    await expect(client.bootId()).resolves.toBe(
      '0f3c9a52-6b1e-4c2e-9d77-1a2b3c4d5e6f',
    );
    expect(fake.calls).toEqual([
      { method: 'Read', request: { path: '/proc/sys/kernel/random/boot_id' } },
    ]);
  });

  it('refuses a boot ID file that holds something else', async () => {
    fake.readChunks = ['not a boot id'];
    await expect(client.bootId()).rejects.toThrow('did not hold a boot ID');
  });

  it('turns an error in the response metadata into a throw', async () => {
    fake.handlers.Reboot = () => ({
      messages: [{ metadata: { hostname: 'n', error: 'reboot is locked' } }],
    });
    await expect(client.reboot()).rejects.toThrow(
      /\/machine\.MachineService\/Reboot: UNKNOWN: reboot is locked$/,
    );
  });

  it('reports the gRPC status with the endpoint and method', async () => {
    const error = await client.reboot().catch(e => e);
    expect(error).toBeInstanceOf(TalosApiError);
    expect(error.code).toBe(status.UNIMPLEMENTED);
    expect(error.message).toBe(
      `Talos API 127.0.0.1:${fake.port} /machine.MachineService/Reboot: UNIMPLEMENTED: method Reboot not implemented`,
    );
    expect(error.notSent).toBe(false);
  });
});

describe('TalosPowerChannel', () => {
  const fake = new FakeTalos();
  const talosconfig = parseTalosconfig(
    [
      'context: t',
      'contexts:',
      '  t:',
      `    ca: ${Buffer.from(TEST_CA_PEM).toString('base64')}`,
      `    crt: ${Buffer.from(TEST_ADMIN_CRT_PEM).toString('base64')}`,
      `    key: ${Buffer.from(TEST_ADMIN_KEY_TALOS_PEM).toString('base64')}`,
    ].join('\n'),
  );
  let channel: TalosPowerChannel;
  let node: { name: string; address: string; systemUUID: string };
  const NODE_UUID = '6963c843-f9c9-456d-acfd-4d79eebc1214';
  const serveUUID = (uuid: string) => () => ({
    resource: {
      spec: {
        protoSpec: Buffer.from(
          messageType(SYSTEM_INFORMATION.specType).encode({ uuid }).finish(),
        ),
      },
    },
  });

  beforeAll(async () => {
    await fake.start();
    node = {
      name: 'worker-1',
      address: `127.0.0.1:${fake.port}`,
      systemUUID: NODE_UUID.toUpperCase(),
    };
    channel = new TalosPowerChannel({
      talosconfig,
      timeoutMs: 500,
      clientOptions: insecure,
    });
  });
  afterAll(async () => {
    await channel.close();
    await fake.stop();
  });
  beforeEach(() => {
    fake.calls.length = 0;
    fake.handlers = { Get: serveUUID(NODE_UUID) };
  });

  it('advertises what the capability rule says of talos', () => {
    expect(channel.capabilities).toEqual({
      reboot: true,
      shutdown: true,
      powerOn: false,
      confirmsPowerOff: false,
    });
    expect((channel as any).powerOn).toBeUndefined();
    expect((channel as any).powerState).toBeUndefined();
  });

  it('sends one Reboot per call and reports the actor', async () => {
    fake.handlers.Reboot = () => ({ messages: [{ actorId: 'actor-9' }] });
    const receipt = await channel.reboot(node);
    expect(receipt).toMatchObject({
      channel: 'talos',
      verb: 'reboot',
      node: 'worker-1',
      detail: `reboot accepted by 127.0.0.1:${fake.port}, actor actor-9`,
    });
    expect(Date.parse(receipt.acceptedAt)).not.toBeNaN();
    expect(fake.count('Reboot')).toBe(1);
    // The UUID was read first, from the SystemInformation resource.
    expect(fake.calls.map(c => c.method)).toEqual(['Get', 'Reboot']);
  });

  it('refuses a verb, notSent, when another machine answers at the address', async () => {
    fake.handlers.Get = serveUUID('aff4ec27-02b1-41a8-abfb-83da24f6a621');
    fake.handlers.Reboot = () => ({ messages: [{ actorId: 'x' }] });
    fake.handlers.Shutdown = () => ({ messages: [{ actorId: 'x' }] });
    for (const verb of ['reboot', 'shutdown'] as const) {
      const error = await channel[verb](node).catch(e => e);
      expect(error).toBeInstanceOf(PowerChannelError);
      expect(error.outcome).toBe('notSent');
      expect(error.message).toBe(
        `talos: ${verb} of node worker-1 not sent: the machine at 127.0.0.1:${fake.port} has SMBIOS UUID aff4ec27-02b1-41a8-abfb-83da24f6a621, not the Node's system UUID ${NODE_UUID}: the address belongs to another machine`,
      );
    }
    expect(fake.count('Reboot') + fake.count('Shutdown')).toBe(0);
  });

  it('sends an Upgrade only to the machine that is the node', async () => {
    fake.handlers.Upgrade = () => ({ messages: [{ actorId: 'up-1' }] });
    const request = { image: 'factory.talos.dev/installer/s:v1.12.0' };
    await expect(channel.upgrade(node, request)).resolves.toMatchObject({
      channel: 'talos',
      verb: 'upgrade',
      detail: `upgrade accepted by 127.0.0.1:${fake.port}, actor up-1`,
    });
    expect(fake.calls.map(c => c.method)).toEqual(['Get', 'Upgrade']);
    fake.calls.length = 0;
    fake.handlers.Get = serveUUID('aff4ec27-02b1-41a8-abfb-83da24f6a621');
    const error = await channel.upgrade(node, request).catch(e => e);
    expect(error).toBeInstanceOf(PowerChannelError);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toMatch(
      /^talos: upgrade of node worker-1 not sent: the machine at .* has SMBIOS UUID aff4ec27/,
    );
    expect(fake.count('Upgrade')).toBe(0);
  });

  it('refuses a verb, notSent, when the UUID cannot be read or the Node has none', async () => {
    fake.handlers.Reboot = () => ({ messages: [{ actorId: 'x' }] });
    delete fake.handlers.Get;
    const unreadable = await channel.reboot(node).catch(e => e);
    expect(unreadable.outcome).toBe('notSent');
    expect(unreadable.message).toMatch(
      /not sent: the SMBIOS UUID at .* could not be read to check it is this node \(UNIMPLEMENTED/,
    );
    const noUUID = await channel
      .reboot({ name: 'worker-1', address: node.address })
      .catch(e => e);
    expect(noUUID.outcome).toBe('notSent');
    expect(noUUID.message).toContain('the Node reports no system UUID');
    expect(fake.count('Reboot')).toBe(0);
  });

  it('a refusal is "refused", never retried', async () => {
    fake.handlers.Shutdown = () => {
      throw Object.assign(new Error('machine is locked'), {
        code: status.FAILED_PRECONDITION,
        details: 'machine is locked',
      });
    };
    const error = await channel.shutdown(node).catch(e => e);
    expect(error).toBeInstanceOf(PowerChannelError);
    expect(error.outcome).toBe('refused');
    expect(error.message).toBe(
      `talos: shutdown node worker-1 at 127.0.0.1:${fake.port} failed: FAILED_PRECONDITION: machine is locked`,
    );
    expect(fake.count('Shutdown')).toBe(1);
  });

  it('no answer within the deadline is "unknown" (the machine may have acted)', async () => {
    fake.handlers.Reboot = () =>
      new Promise(resolve =>
        setTimeout(() => resolve({ messages: [{}] }), 1500),
      );
    const error = await channel.reboot(node).catch(e => e);
    expect(error.outcome).toBe('unknown');
    expect(error.code).toBe(status.DEADLINE_EXCEEDED);
    expect(fake.count('Reboot')).toBe(1);
  });

  it('a refused connection is "notSent"', async () => {
    const error = await channel
      .reboot({ name: 'gone', address: '127.0.0.1:1', systemUUID: NODE_UUID })
      .catch(e => e);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toMatch(
      /^talos: reboot of node gone not sent: the SMBIOS UUID at 127\.0\.0\.1:1 could not be read to check it is this node \(UNAVAILABLE: /,
    );
  });

  it('a node without an address is "notSent" with a clear message', async () => {
    const error = await channel.reboot({ name: 'virt-1' }).catch(e => e);
    expect(error.outcome).toBe('notSent');
    expect(error.message).toBe(
      'talos: cannot reboot node virt-1: it has no InternalIP to reach its Talos API',
    );
  });

  it('reads the boot ID', async () => {
    fake.readChunks = ['0f3c9a52-6b1e-4c2e-9d77-1a2b3c4d5e6f\n'];
    await expect(channel.bootId(node)).resolves.toBe(
      '0f3c9a52-6b1e-4c2e-9d77-1a2b3c4d5e6f',
    );
  });
});
