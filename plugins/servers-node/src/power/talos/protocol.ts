import { Root, type INamespace, type Type } from 'protobufjs';

/**
 * The part of the Talos machine API (machinery v1.13.9) and of the COSI state API
 * (cosi-project/runtime v1.14.1, which Talos serves) that Rackside calls, written as a
 * protobufjs descriptor. Only the fields we read or write are declared: protobuf
 * decoders skip the others. `protocol.test.ts` checks every message, field, enum and
 * method here against the official descriptor set of machinery v1.13.9.
 */
const TALOS_API: Record<string, unknown> = {
  nested: {
    google: {
      nested: {
        protobuf: {
          nested: {
            Empty: { fields: {} },
            Duration: {
              fields: {
                seconds: { type: 'int64', id: 1 },
                nanos: { type: 'int32', id: 2 },
              },
            },
          },
        },
        rpc: {
          nested: {
            Status: {
              fields: {
                code: { type: 'int32', id: 1 },
                message: { type: 'string', id: 2 },
              },
            },
          },
        },
      },
    },
    common: {
      nested: {
        Metadata: {
          fields: {
            hostname: { type: 'string', id: 1 },
            error: { type: 'string', id: 2 },
            status: { type: 'google.rpc.Status', id: 3 },
          },
        },
        Data: {
          fields: {
            metadata: { type: 'common.Metadata', id: 1 },
            bytes: { type: 'bytes', id: 2 },
          },
        },
      },
    },
    machine: {
      nested: {
        MachineService: {
          methods: {
            Version: {
              requestType: 'google.protobuf.Empty',
              responseType: 'VersionResponse',
            },
            Reboot: {
              requestType: 'RebootRequest',
              responseType: 'RebootResponse',
            },
            Shutdown: {
              requestType: 'ShutdownRequest',
              responseType: 'ShutdownResponse',
            },
            Reset: {
              requestType: 'ResetRequest',
              responseType: 'ResetResponse',
            },
            Upgrade: {
              requestType: 'UpgradeRequest',
              responseType: 'UpgradeResponse',
            },
            ApplyConfiguration: {
              requestType: 'ApplyConfigurationRequest',
              responseType: 'ApplyConfigurationResponse',
            },
            EtcdMemberList: {
              requestType: 'EtcdMemberListRequest',
              responseType: 'EtcdMemberListResponse',
            },
            Read: {
              requestType: 'ReadRequest',
              responseType: 'common.Data',
              responseStream: true,
            },
          },
        },
        VersionResponse: {
          fields: {
            messages: { rule: 'repeated', type: 'Version', id: 1 },
          },
        },
        Version: {
          fields: {
            metadata: { type: 'common.Metadata', id: 1 },
            version: { type: 'VersionInfo', id: 2 },
            platform: { type: 'PlatformInfo', id: 3 },
          },
        },
        VersionInfo: {
          fields: {
            tag: { type: 'string', id: 1 },
            sha: { type: 'string', id: 2 },
            built: { type: 'string', id: 3 },
            goVersion: { type: 'string', id: 4 },
            os: { type: 'string', id: 5 },
            arch: { type: 'string', id: 6 },
          },
        },
        PlatformInfo: {
          fields: {
            name: { type: 'string', id: 1 },
            mode: { type: 'string', id: 2 },
          },
        },
        RebootRequest: {
          fields: { mode: { type: 'RebootRequest.Mode', id: 1 } },
          nested: {
            Mode: { values: { DEFAULT: 0, POWERCYCLE: 1, FORCE: 2 } },
          },
        },
        RebootResponse: {
          fields: { messages: { rule: 'repeated', type: 'Reboot', id: 1 } },
        },
        Reboot: {
          fields: {
            metadata: { type: 'common.Metadata', id: 1 },
            actorId: { type: 'string', id: 2 },
          },
        },
        ShutdownRequest: {
          fields: { force: { type: 'bool', id: 1 } },
        },
        ShutdownResponse: {
          fields: { messages: { rule: 'repeated', type: 'Shutdown', id: 1 } },
        },
        Shutdown: {
          fields: {
            metadata: { type: 'common.Metadata', id: 1 },
            actorId: { type: 'string', id: 2 },
          },
        },
        ResetPartitionSpec: {
          fields: {
            label: { type: 'string', id: 1 },
            wipe: { type: 'bool', id: 2 },
          },
        },
        ResetRequest: {
          fields: {
            graceful: { type: 'bool', id: 1 },
            reboot: { type: 'bool', id: 2 },
            systemPartitionsToWipe: {
              rule: 'repeated',
              type: 'ResetPartitionSpec',
              id: 3,
            },
            mode: { type: 'ResetRequest.WipeMode', id: 5 },
          },
          nested: {
            WipeMode: { values: { ALL: 0, SYSTEM_DISK: 1, USER_DISKS: 2 } },
          },
        },
        ResetResponse: {
          fields: { messages: { rule: 'repeated', type: 'Reset', id: 1 } },
        },
        Reset: {
          fields: {
            metadata: { type: 'common.Metadata', id: 1 },
            actorId: { type: 'string', id: 2 },
          },
        },
        UpgradeRequest: {
          fields: {
            image: { type: 'string', id: 1 },
            preserve: { type: 'bool', id: 2 },
            stage: { type: 'bool', id: 3 },
            force: { type: 'bool', id: 4 },
          },
        },
        UpgradeResponse: {
          fields: { messages: { rule: 'repeated', type: 'Upgrade', id: 1 } },
        },
        Upgrade: {
          fields: {
            metadata: { type: 'common.Metadata', id: 1 },
            ack: { type: 'string', id: 2 },
            actorId: { type: 'string', id: 3 },
          },
        },
        ApplyConfigurationRequest: {
          fields: {
            data: { type: 'bytes', id: 1 },
            mode: { type: 'ApplyConfigurationRequest.Mode', id: 4 },
            dryRun: { type: 'bool', id: 5 },
          },
          nested: {
            Mode: {
              values: { REBOOT: 0, AUTO: 1, NO_REBOOT: 2, STAGED: 3, TRY: 4 },
            },
          },
        },
        ApplyConfigurationResponse: {
          fields: {
            messages: { rule: 'repeated', type: 'ApplyConfiguration', id: 1 },
          },
        },
        ApplyConfiguration: {
          fields: {
            metadata: { type: 'common.Metadata', id: 1 },
            warnings: { rule: 'repeated', type: 'string', id: 2 },
            mode: { type: 'ApplyConfigurationRequest.Mode', id: 3 },
            modeDetails: { type: 'string', id: 4 },
          },
        },
        EtcdMemberListRequest: {
          fields: { queryLocal: { type: 'bool', id: 1 } },
        },
        EtcdMemberListResponse: {
          fields: {
            messages: { rule: 'repeated', type: 'EtcdMembers', id: 1 },
          },
        },
        EtcdMembers: {
          fields: {
            metadata: { type: 'common.Metadata', id: 1 },
            members: { rule: 'repeated', type: 'EtcdMember', id: 3 },
          },
        },
        EtcdMember: {
          fields: {
            id: { type: 'uint64', id: 2 },
            hostname: { type: 'string', id: 3 },
            peerUrls: { rule: 'repeated', type: 'string', id: 4 },
            clientUrls: { rule: 'repeated', type: 'string', id: 5 },
            isLearner: { type: 'bool', id: 6 },
          },
        },
        ReadRequest: {
          fields: { path: { type: 'string', id: 1 } },
        },
      },
    },
    cosi: {
      nested: {
        resource: {
          nested: {
            State: {
              methods: {
                Get: { requestType: 'GetRequest', responseType: 'GetResponse' },
              },
            },
            GetRequest: {
              fields: {
                namespace: { type: 'string', id: 1 },
                type: { type: 'string', id: 2 },
                id: { type: 'string', id: 3 },
                options: { type: 'GetOptions', id: 4 },
              },
            },
            GetOptions: { fields: {} },
            GetResponse: {
              fields: { resource: { type: 'Resource', id: 1 } },
            },
            Resource: {
              fields: {
                metadata: { type: 'Metadata', id: 1 },
                spec: { type: 'Spec', id: 2 },
              },
            },
            Metadata: {
              fields: {
                namespace: { type: 'string', id: 1 },
                type: { type: 'string', id: 2 },
                id: { type: 'string', id: 3 },
                version: { type: 'string', id: 4 },
                phase: { type: 'string', id: 6 },
              },
            },
            Spec: {
              fields: {
                protoSpec: { type: 'bytes', id: 1 },
                yamlSpec: { type: 'string', id: 2 },
              },
            },
          },
        },
      },
    },
    talos: {
      nested: {
        resource: {
          nested: {
            definitions: {
              nested: {
                hardware: {
                  nested: {
                    SystemInformationSpec: {
                      fields: {
                        manufacturer: { type: 'string', id: 1 },
                        productName: { type: 'string', id: 2 },
                        version: { type: 'string', id: 3 },
                        serialNumber: { type: 'string', id: 4 },
                        uuid: { type: 'string', id: 5 },
                      },
                    },
                  },
                },
              },
            },
          },
        },
      },
    },
  },
};

/** The descriptor above, for the conformance test. */
// protobufjs types the JSON form as a union its checker cannot match on a literal this
// deep; protocol.test.ts checks the content instead.
export const TALOS_API_DESCRIPTOR = TALOS_API as INamespace;

/** The resolved definitions. */
export const talosApiRoot: Root = Root.fromJSON(TALOS_API_DESCRIPTOR);
talosApiRoot.resolveAll();

/** A message type by its full name, e.g. `machine.RebootRequest`. */
export function messageType(fullName: string): Type {
  return talosApiRoot.lookupType(fullName);
}

/** One RPC of a service: its gRPC path and its message types. */
export interface TalosMethod {
  path: string;
  requestType: Type;
  responseType: Type;
  responseStream: boolean;
}

/** A method by service and name: `method('machine.MachineService', 'Reboot')`. */
export function method(service: string, name: string): TalosMethod {
  const m = talosApiRoot.lookupService(service).methods[name];
  if (!m)
    throw new Error(
      `no method ${service}/${name} in the Talos API definitions`,
    );
  m.resolve();
  return {
    path: `/${service}/${name}`,
    requestType: m.resolvedRequestType!,
    responseType: m.resolvedResponseType!,
    responseStream: Boolean(m.responseStream),
  };
}

/** The COSI resource that carries the SMBIOS UUID (spec field `uuid` = 5). */
export const SYSTEM_INFORMATION = {
  namespace: 'hardware',
  type: 'SystemInformations.hardware.talos.dev',
  id: 'systeminformation',
  specType: 'talos.resource.definitions.hardware.SystemInformationSpec',
} as const;

/**
 * Where a Talos machine exposes the running kernel's boot ID: the procfs file, read
 * through MachineService/Read (what talosctl's reboot tracker reads).
 */
export const BOOT_ID_PATH = '/proc/sys/kernel/random/boot_id';

/** The system partitions a reset for re-use wipes (machine state and ephemeral data). */
export const RESET_WIPE_LABELS = ['STATE', 'EPHEMERAL'] as const;
