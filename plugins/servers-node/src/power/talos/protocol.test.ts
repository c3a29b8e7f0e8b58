/*
 * The Talos API definitions Rackside writes itself (protocol.ts) against the official
 * descriptor set of machinery v1.13.9 (fixtures/talos, vendored): every message, field,
 * enum value and method we use must exist there with the same number, type, label and
 * request/response types. COSI's State API is not part of that set (it lives in
 * cosi-project/runtime); its few fields are checked against the table below, taken
 * from runtime v1.14.1 (the version machinery v1.13.9 and the rack's emulator use), and
 * proven on the wire by the rack test against the emulator's real COSI server.
 */
import { REPO_ROOT } from '@rackside/rack-testing';
import fs from 'node:fs';
import path from 'node:path';
import { Enum, Namespace, Service, Type, util } from 'protobufjs';
import descriptor from 'protobufjs/ext/descriptor';
import { method, messageType, talosApiRoot } from './protocol';

const DESCRIPTOR_SET = path.resolve(
  REPO_ROOT,
  'fixtures',
  'talos',
  'machinery-v1.13.9-lock.binpb',
);

// FieldDescriptorProto.Type numbers (descriptor.proto).
const SCALAR_TYPES: Record<string, number> = {
  double: 1,
  float: 2,
  int64: 3,
  uint64: 4,
  int32: 5,
  fixed64: 6,
  fixed32: 7,
  bool: 8,
  string: 9,
  bytes: 12,
  uint32: 13,
  sfixed32: 15,
  sfixed64: 16,
  sint32: 17,
  sint64: 18,
};
const TYPE_MESSAGE = 11;
const TYPE_ENUM = 14;
const LABEL_REPEATED = 3;

interface OfficialField {
  name: string;
  number: number;
  type: number;
  typeName?: string;
  label: number;
}
interface OfficialMethod {
  inputType: string;
  outputType: string;
  serverStreaming: boolean;
  clientStreaming: boolean;
}

/** Messages, enums and services of the descriptor set, by full name without the leading dot. */
function loadOfficial() {
  const set = descriptor.FileDescriptorSet.decode(
    fs.readFileSync(DESCRIPTOR_SET),
  ) as any;
  const messages = new Map<string, OfficialField[]>();
  const enums = new Map<string, Map<string, number>>();
  const services = new Map<string, Map<string, OfficialMethod>>();
  const walk = (scope: string, msgs: any[] = [], ens: any[] = []) => {
    for (const e of ens) {
      enums.set(
        `${scope}.${e.name}`,
        new Map(e.value.map((v: any) => [v.name, v.number])),
      );
    }
    for (const m of msgs) {
      const name = `${scope}.${m.name}`;
      messages.set(
        name,
        (m.field ?? []).map((f: any) => ({
          name: f.name,
          number: f.number,
          type: f.type,
          typeName: f.typeName || undefined,
          label: f.label,
        })),
      );
      walk(name, m.nestedType, m.enumType);
    }
  };
  for (const file of set.file) {
    walk(file.package, file.messageType, file.enumType);
    for (const s of file.service ?? []) {
      services.set(
        `${file.package}.${s.name}`,
        new Map(
          s.method.map((m: any) => [
            m.name,
            {
              inputType: m.inputType,
              outputType: m.outputType,
              serverStreaming: Boolean(m.serverStreaming),
              clientStreaming: Boolean(m.clientStreaming),
            },
          ]),
        ),
      );
    }
  }
  return { messages, enums, services };
}

/** cosi-project/runtime v1.14.1, api/v1alpha1 (package cosi.resource): the fields we declare. */
const COSI_REFERENCE = {
  messages: new Map<string, OfficialField[]>([
    [
      'cosi.resource.GetRequest',
      [
        { name: 'namespace', number: 1, type: 9, label: 1 },
        { name: 'type', number: 2, type: 9, label: 1 },
        { name: 'id', number: 3, type: 9, label: 1 },
        {
          name: 'options',
          number: 4,
          type: 11,
          typeName: '.cosi.resource.GetOptions',
          label: 1,
        },
      ],
    ],
    ['cosi.resource.GetOptions', []],
    [
      'cosi.resource.GetResponse',
      [
        {
          name: 'resource',
          number: 1,
          type: 11,
          typeName: '.cosi.resource.Resource',
          label: 1,
        },
      ],
    ],
    [
      'cosi.resource.Resource',
      [
        {
          name: 'metadata',
          number: 1,
          type: 11,
          typeName: '.cosi.resource.Metadata',
          label: 1,
        },
        {
          name: 'spec',
          number: 2,
          type: 11,
          typeName: '.cosi.resource.Spec',
          label: 1,
        },
      ],
    ],
    [
      'cosi.resource.Metadata',
      [
        { name: 'namespace', number: 1, type: 9, label: 1 },
        { name: 'type', number: 2, type: 9, label: 1 },
        { name: 'id', number: 3, type: 9, label: 1 },
        { name: 'version', number: 4, type: 9, label: 1 },
        { name: 'owner', number: 5, type: 9, label: 1 },
        { name: 'phase', number: 6, type: 9, label: 1 },
      ],
    ],
    [
      'cosi.resource.Spec',
      [
        { name: 'proto_spec', number: 1, type: 12, label: 1 },
        { name: 'yaml_spec', number: 2, type: 9, label: 1 },
      ],
    ],
  ]),
  services: new Map<string, Map<string, OfficialMethod>>([
    [
      'cosi.resource.State',
      new Map([
        [
          'Get',
          {
            inputType: '.cosi.resource.GetRequest',
            outputType: '.cosi.resource.GetResponse',
            serverStreaming: false,
            clientStreaming: false,
          },
        ],
      ]),
    ],
  ]),
};

/** The descriptor's type number for a field of ours. */
function wireType(resolved: unknown, scalar: string): number {
  if (resolved instanceof Type) return TYPE_MESSAGE;
  if (resolved instanceof Enum) return TYPE_ENUM;
  return SCALAR_TYPES[scalar];
}

function ours() {
  const types: Type[] = [];
  const enums: Enum[] = [];
  const services: Service[] = [];
  const walk = (ns: Namespace) => {
    for (const child of ns.nestedArray) {
      if (child instanceof Type) types.push(child);
      else if (child instanceof Enum) enums.push(child);
      else if (child instanceof Service) services.push(child);
      if (child instanceof Namespace) walk(child);
    }
  };
  walk(talosApiRoot);
  return { types, enums, services };
}

const fullName = (t: { fullName: string }) => t.fullName.replace(/^\./, '');
const isCosi = (name: string) => name.startsWith('cosi.');

describe('Talos API definitions against machinery v1.13.9', () => {
  const official = loadOfficial();
  const { types, enums, services } = ours();

  it('reads the official descriptor set', () => {
    expect(official.messages.get('machine.RebootRequest')).toBeDefined();
    expect(official.services.get('machine.MachineService')?.size).toBe(54);
    expect(types.length).toBeGreaterThan(30);
  });

  it.each(types.map(t => [fullName(t), t] as const))(
    'message %s has the official field numbers, types and labels',
    (name, type) => {
      const reference = isCosi(name)
        ? COSI_REFERENCE.messages.get(name)
        : official.messages.get(name);
      expect(reference).toBeDefined();
      for (const field of type.fieldsArray) {
        field.resolve();
        const match = reference!.find(
          f => util.camelCase(f.name) === field.name,
        );
        expect({ field: field.name, found: Boolean(match) }).toEqual({
          field: field.name,
          found: true,
        });
        const expectedType = wireType(field.resolvedType, field.type);
        expect({
          field: field.name,
          number: field.id,
          type: expectedType,
          typeName: field.resolvedType
            ? field.resolvedType.fullName
            : undefined,
          repeated: field.repeated,
        }).toEqual({
          field: field.name,
          number: match!.number,
          type: match!.type,
          typeName: match!.typeName,
          repeated: match!.label === LABEL_REPEATED,
        });
      }
    },
  );

  it.each(enums.map(e => [fullName(e), e] as const))(
    'enum %s has the official values',
    (name, en) => {
      const reference = official.enums.get(name);
      expect(reference).toBeDefined();
      for (const [valueName, number] of Object.entries(en.values)) {
        expect([valueName, reference!.get(valueName)]).toEqual([
          valueName,
          number,
        ]);
      }
    },
  );

  const methods = services.flatMap(s =>
    s.methodsArray.map(m => [`/${fullName(s)}/${m.name}`, s, m] as const),
  );

  it.each(methods)(
    'method %s exists with the same request and response types',
    (_path, service, m) => {
      const name = fullName(service);
      const reference = (
        isCosi(name) ? COSI_REFERENCE.services : official.services
      )
        .get(name)
        ?.get(m.name);
      expect(reference).toBeDefined();
      m.resolve();
      expect({
        inputType: m.resolvedRequestType!.fullName,
        outputType: m.resolvedResponseType!.fullName,
        serverStreaming: Boolean(m.responseStream),
        clientStreaming: Boolean(m.requestStream),
      }).toEqual(reference);
    },
  );

  it('covers every method the client calls', () => {
    expect(methods.map(([p]) => p).sort()).toEqual([
      '/cosi.resource.State/Get',
      '/machine.MachineService/ApplyConfiguration',
      '/machine.MachineService/EtcdMemberList',
      '/machine.MachineService/Read',
      '/machine.MachineService/Reboot',
      '/machine.MachineService/Reset',
      '/machine.MachineService/Shutdown',
      '/machine.MachineService/Upgrade',
      '/machine.MachineService/Version',
    ]);
    expect(method('machine.MachineService', 'Read').responseStream).toBe(true);
  });

  it('encodes what the official numbers say on the wire', () => {
    // ApplyConfigurationRequest{data (1, bytes), mode (4) = AUTO (1)}
    const apply = messageType('machine.ApplyConfigurationRequest');
    const bytes = apply
      .encode(apply.fromObject({ data: Buffer.from('x'), mode: 'AUTO' }))
      .finish();
    expect(Buffer.from(bytes).toString('hex')).toBe('0a01782001');
    // UpgradeRequest{image (1, string), preserve (2) = true, stage (3) = false, force (4) = true}
    // (a false the client sets is on the wire too: the descriptor has no proto3 syntax)
    const upgrade = messageType('machine.UpgradeRequest');
    const upgradeBytes = upgrade
      .encode(
        upgrade.fromObject({
          image: 'r/i:v1',
          preserve: true,
          stage: false,
          force: true,
        }),
      )
      .finish();
    expect(Buffer.from(upgradeBytes).toString('hex')).toBe(
      '0a06722f693a7631100118002001',
    );
    // SystemInformationSpec.uuid is field 5 (tag 0x2a)
    const spec = messageType(
      'talos.resource.definitions.hardware.SystemInformationSpec',
    );
    const decoded = spec.decode(
      Buffer.concat([Buffer.from([0x2a, 3]), Buffer.from('abc')]),
    ) as any;
    expect(decoded.uuid).toBe('abc');
  });
});
