import { isTerminalPhase, MAINTENANCE_PHASES } from '../rules/quorum';
import { examples } from './fixtures';
import {
  isTerminalReclaimPhase,
  machineReclaimSchema,
  MACHINE_RECLAIM_PHASES,
} from './machineReclaim';
import { nodeMaintenanceSchema } from './nodeMaintenance';
import { powerAdvertisementOf, powerProviderSchema } from './powerProvider';
import { serverBmcSchema } from './serverBmc';
import { reclaimAddedAddresses, talosClusterSchema } from './talosCluster';
import { talosMachineSchema } from './talosMachine';
import { RACKSIDE_RESOURCES } from './definitions';

function messages(result: {
  success: boolean;
  error?: { issues: { path: PropertyKey[]; message: string }[] };
}): string[] {
  return (result.error?.issues ?? []).map(
    issue => `${issue.path.map(String).join('.')}: ${issue.message}`,
  );
}

describe('NodeMaintenance', () => {
  it('parses a valid object and applies defaults', () => {
    const nm = nodeMaintenanceSchema.parse(examples.nodeMaintenance());
    expect(nm.spec.drain).toEqual({
      allowNodeLocalData: false,
      timeoutSeconds: 600,
      deleteEmptyDirData: false,
      force: false,
    });
    expect(nm.spec.intent).toBe('drain');
  });

  it('keeps unknown metadata (managedFields, ...) and drops unknown spec fields', () => {
    const input = examples.nodeMaintenance();
    const nm = nodeMaintenanceSchema.parse({
      ...input,
      metadata: { ...input.metadata, managedFields: [{ manager: 'kubectl' }] },
      spec: { ...input.spec, bogus: 1 },
    });
    expect(nm.metadata).toHaveProperty('managedFields');
    expect(nm.spec).not.toHaveProperty('bogus');
  });

  it('parses a full status', () => {
    const nm = nodeMaintenanceSchema.parse({
      ...examples.nodeMaintenance(),
      status: {
        phase: 'Draining',
        conditions: [
          {
            type: 'PowerOffConfirmed',
            status: 'Unknown',
            reason: 'NoReadback',
            message: 'the talos channel cannot see power state',
            lastTransitionTime: '2026-08-04T10:05:00Z',
          },
        ],
        drain: {
          total: 3,
          evicted: 1,
          pending: 2,
          pendingPods: ['shop/payments-7c9f-abcde', 'shop/web-1'],
          blockedBy: [
            {
              pod: 'shop/payments-7c9f-abcde',
              pdb: 'payments',
              message:
                "Cannot evict pod as it would violate the pod's disruption budget.",
            },
          ],
        },
        wasUnschedulable: false,
        cordonedAt: '2026-08-04T10:01:00Z',
        power: {
          shutdown: {
            recordedAt: '2026-08-04T10:06:00Z',
            sentAt: '2026-08-04T10:06:01Z',
            channel: 'redfish',
            detail: 'GracefulShutdown',
          },
        },
        history: [{ phase: 'Requested', at: '2026-08-04T10:00:00Z' }],
        observedGeneration: 1,
      },
    });
    expect(nm.status?.drain?.blockedBy?.[0].pdb).toBe('payments');
  });

  it.each([
    [
      'an unknown intent',
      { intent: 'explode' },
      /spec\.intent: Invalid option: expected one of/,
    ],
    [
      'a missing reason',
      { reason: undefined },
      /spec\.reason: Invalid input: expected string, received undefined/,
    ],
    ['a blank reason', { reason: '   ' }, /spec\.reason: Invalid/],
    [
      'powerOn on a drain',
      { powerOn: { by: 'user:default/jane', reason: 'back' } },
      /spec\.powerOn: powerOn applies only to a maintenance with intent shutdown/,
    ],
    [
      'a request flag without a reason',
      { returnToService: { by: 'user:default/jane' } },
      /spec\.returnToService\.reason: Invalid input: expected string, received undefined/,
    ],
    [
      'a negative grace period',
      { drain: { gracePeriodSeconds: -1 } },
      /spec\.drain\.gracePeriodSeconds/,
    ],
  ])('rejects %s', (_what, patch, expected) => {
    const input = examples.nodeMaintenance();
    const result = nodeMaintenanceSchema.safeParse({
      ...input,
      spec: { ...input.spec, ...patch },
    });
    expect(result.success).toBe(false);
    expect(messages(result).join('\n')).toMatch(expected);
  });

  it('accepts powerOn on a shutdown', () => {
    const input = examples.nodeMaintenance();
    const result = nodeMaintenanceSchema.safeParse({
      ...input,
      spec: {
        ...input.spec,
        intent: 'shutdown',
        powerOn: { by: 'user:default/jane', reason: 'back' },
      },
    });
    expect(messages(result)).toEqual([]);
  });

  it('bounds the history at 50 and rejects an unknown phase', () => {
    const at = '2026-08-04T10:00:00Z';
    const history = Array.from({ length: 51 }, () => ({
      phase: 'Draining',
      at,
    }));
    expect(
      nodeMaintenanceSchema.safeParse({
        ...examples.nodeMaintenance(),
        status: { history },
      }).success,
    ).toBe(false);
    expect(
      nodeMaintenanceSchema.safeParse({
        ...examples.nodeMaintenance(),
        status: { history: history.slice(1) },
      }).success,
    ).toBe(true);
    expect(
      nodeMaintenanceSchema.safeParse({
        ...examples.nodeMaintenance(),
        status: { phase: 'Exploded' },
      }).success,
    ).toBe(false);
  });

  it('requires RFC 3339 timestamps', () => {
    const result = nodeMaintenanceSchema.safeParse({
      ...examples.nodeMaintenance(),
      status: { cordonedAt: 'yesterday' },
    });
    expect(messages(result).join('\n')).toMatch(/status\.cordonedAt/);
  });

  it('uses the phases of quorum.ts', () => {
    expect(MAINTENANCE_PHASES.filter(isTerminalPhase)).toEqual([
      'Complete',
      'Refused',
      'Failed',
    ]);
  });
});

describe('PowerProvider', () => {
  it('defaults an empty spec to type none', () => {
    const pp = powerProviderSchema.parse({
      apiVersion: 'rackside.dev/v1alpha1',
      kind: 'PowerProvider',
      metadata: { name: 'default' },
    });
    expect(pp.spec).toEqual({ type: 'none', attendedRack: false });
  });

  it('applies redfish defaults', () => {
    const pp = powerProviderSchema.parse(examples.powerProvider());
    expect(pp.spec.redfish).toMatchObject({
      insecureSkipVerify: false,
      readbackWindowSeconds: 300,
      readbackIntervalSeconds: 5,
      credentialsSecretRef: {
        usernameKey: 'username',
        passwordKey: 'password',
      },
      caBundleRef: { kind: 'Secret', key: 'ca.crt' },
    });
  });

  it.each([
    [
      'a name other than default',
      { metadata: { name: 'main' } },
      /must be named default/,
    ],
    [
      'an unknown type',
      { spec: { type: 'ipmi' } },
      /spec\.type: Invalid option: expected one of/,
    ],
    [
      'talos without its Secret',
      { spec: { type: 'talos' } },
      /spec\.talos: type talos needs/,
    ],
    [
      'redfish without CA bundle or insecureSkipVerify',
      {
        spec: {
          type: 'redfish',
          redfish: { credentialsSecretRef: { name: 'bmc' } },
        },
      },
      /exactly one of caBundleRef or insecureSkipVerify/,
    ],
    [
      'redfish with both',
      {
        spec: {
          type: 'redfish',
          redfish: {
            credentialsSecretRef: { name: 'bmc' },
            caBundleRef: { name: 'ca' },
            insecureSkipVerify: true,
          },
        },
      },
      /exactly one of caBundleRef or insecureSkipVerify/,
    ],
    [
      'an inline password',
      {
        spec: {
          type: 'redfish',
          redfish: { credentialsSecretRef: { password: 'hunter2' } },
        },
      },
      /credentialsSecretRef\.name: Invalid input: expected string, received undefined/,
    ],
  ])('rejects %s', (_what, patch, expected) => {
    const result = powerProviderSchema.safeParse({
      ...examples.powerProvider(),
      ...patch,
    });
    expect(result.success).toBe(false);
    expect(messages(result).join('\n')).toMatch(expected);
  });

  it('reads the advertisement, and nothing from a stale status', () => {
    expect(powerAdvertisementOf(undefined)).toMatchObject({
      type: 'none',
      reboot: false,
    });
    const pp = powerProviderSchema.parse({
      ...examples.powerProvider(),
      metadata: { name: 'default', generation: 2 },
      spec: {
        type: 'talos',
        attendedRack: true,
        talos: { secretRef: { name: 't' } },
      },
      status: { reboot: true, shutdown: true, observedGeneration: 2 },
    });
    expect(powerAdvertisementOf(pp)).toEqual({
      type: 'talos',
      attendedRack: true,
      reboot: true,
      shutdown: true,
      powerOn: false,
      confirmsPowerOff: false,
    });
    const stale = { ...pp, metadata: { ...pp.metadata, generation: 3 } };
    expect(powerAdvertisementOf(stale).reboot).toBe(false);
  });
});

describe('ServerBMC', () => {
  it('parses a valid object', () => {
    expect(serverBmcSchema.parse(examples.serverBmc()).spec.address).toBe(
      'https://127.0.0.1:8443',
    );
  });

  it.each([
    ['a non-http address', { address: 'ftp://bmc' }, /spec\.address/],
    [
      'a path outside Systems',
      { systemPath: '/redfish/v1/Managers/1' },
      /spec\.systemPath/,
    ],
  ])('rejects %s', (_what, patch, expected) => {
    const input = examples.serverBmc();
    const result = serverBmcSchema.safeParse({
      ...input,
      spec: { ...input.spec, ...patch },
    });
    expect(messages(result).join('\n')).toMatch(expected);
  });
});

describe('TalosCluster', () => {
  it('applies the discovery defaults', () => {
    const input = examples.talosCluster();
    const tc = talosClusterSchema.parse({
      ...input,
      spec: { ...input.spec, discovery: undefined },
    });
    expect(tc.spec.discovery).toEqual({
      allowedNetworks: [],
      talosPort: 50000,
      addresses: [],
      intervalSeconds: 300,
    });
    expect(tc.spec.joinConfigSecretRef.key).toBe('config.yaml');
    expect(tc.spec.talosconfigSecretRef.key).toBe('talosconfig');
  });

  it.each([
    ['127.0.10.5/24', 'bits set after the prefix'],
    ['10.0.0.0/33', 'must be a CIDR'],
    ['10.0.0.0', 'must be a CIDR'],
    ['::ffff:10.0.0.0/120', 'must be a CIDR'],
    ['fd00::/129', 'must be a CIDR'],
    ['example.com/24', 'must be a CIDR'],
  ])('rejects the allowed network %s', (network, expected) => {
    const input = examples.talosCluster();
    const result = talosClusterSchema.safeParse({
      ...input,
      spec: {
        ...input.spec,
        discovery: { ...input.spec.discovery, allowedNetworks: [network] },
      },
    });
    expect(messages(result).join('\n')).toContain(expected);
  });

  it('accepts IPv4 and IPv6 networks and a Talos port', () => {
    const input = examples.talosCluster();
    const tc = talosClusterSchema.parse({
      ...input,
      spec: {
        ...input.spec,
        discovery: {
          ...input.spec.discovery,
          allowedNetworks: ['127.0.10.0/24', 'fd00:5::/64', '0.0.0.0/0'],
          talosPort: 50001,
        },
      },
    });
    expect(tc.spec.discovery.talosPort).toBe(50001);
  });

  it('rejects an unknown address state', () => {
    const result = talosClusterSchema.safeParse({
      ...examples.talosCluster(),
      status: { addresses: [{ address: '127.0.10.21', state: 'Gone' }] },
    });
    expect(messages(result).join('\n')).toMatch(/status\.addresses\.0\.state/);
  });

  it('reads the reclaim-added addresses annotation', () => {
    expect(
      reclaimAddedAddresses({
        metadata: {
          annotations: {
            'rackside.dev/reclaim-added-addresses': '10.0.0.1, 10.0.0.2,',
          },
        },
      }),
    ).toEqual(['10.0.0.1', '10.0.0.2']);
    expect(reclaimAddedAddresses({ metadata: {} })).toEqual([]);
  });
});

describe('TalosMachine', () => {
  it('parses a valid object', () => {
    expect(talosMachineSchema.parse(examples.talosMachine()).spec.cluster).toBe(
      'plant-a',
    );
  });

  it('must be named by a lower-case SMBIOS UUID', () => {
    const result = talosMachineSchema.safeParse(
      examples.talosMachine('worker-1'),
    );
    expect(messages(result).join('\n')).toMatch(/named by its SMBIOS UUID/);
  });
});

describe('MachineReclaim', () => {
  it('defaults ttlMinutes to 15', () => {
    const mr = machineReclaimSchema.parse(examples.machineReclaim());
    expect(mr.spec.ttlMinutes).toBe(15);
    expect(mr.spec.credentialSecretRef.key).toBe('talosconfig');
  });

  it.each([
    [0, false],
    [1, true],
    [60, true],
    [61, false],
    [1.5, false],
  ])('ttlMinutes %p valid: %p', (ttlMinutes, valid) => {
    const input = examples.machineReclaim();
    const result = machineReclaimSchema.safeParse({
      ...input,
      spec: { ...input.spec, ttlMinutes },
    });
    expect(result.success).toBe(valid);
  });

  it('accepts a UUID in confirmUUID and nothing else', () => {
    const input = examples.machineReclaim();
    const parse = (confirmUUID: string) =>
      machineReclaimSchema.safeParse({
        ...input,
        spec: { ...input.spec, confirmUUID },
      }).success;
    expect(parse('4C4C4544-0031-3810-8044-B1C04F4D3232')).toBe(true);
    expect(parse('yes')).toBe(false);
  });

  it('knows its terminal phases', () => {
    expect(MACHINE_RECLAIM_PHASES.filter(isTerminalReclaimPhase)).toEqual([
      'Done',
      'Failed',
      'Expired',
      'Refused',
    ]);
  });
});

describe('RACKSIDE_RESOURCES', () => {
  it('names every kind with its scope and short name', () => {
    expect(
      Object.values(RACKSIDE_RESOURCES).map(r => [
        r.kind,
        r.plural,
        r.namespaced,
        r.shortNames.join(','),
      ]),
    ).toEqual([
      ['NodeMaintenance', 'nodemaintenances', false, 'nm'],
      ['PowerProvider', 'powerproviders', false, 'pp'],
      ['ServerBMC', 'serverbmcs', false, 'sbmc'],
      ['TalosCluster', 'talosclusters', true, 'tc'],
      ['TalosMachine', 'talosmachines', true, 'tm'],
      ['MachineReclaim', 'machinereclaims', true, 'mr'],
      ['MaintenancePlan', 'maintenanceplans', false, 'mp'],
    ]);
    expect(RACKSIDE_RESOURCES.NodeMaintenance.apiVersion).toBe(
      'rackside.dev/v1alpha1',
    );
  });
});
