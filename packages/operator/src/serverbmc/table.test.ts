import type { ServerBMC } from '@rackside/plugin-servers-common';
import type { SecretReader } from '../runtime/kube/secrets';
import { testNode } from '../testing/nodes';
import { reconcileServerBmc } from './reconciler';
import { serverBmcTable, stateOf, type ServerBmcReads } from './table';

const AT = '2026-12-07T08:00:00.000Z';

function bmc(overrides: Partial<ServerBMC> = {}): ServerBMC {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'ServerBMC',
    metadata: { name: 'worker-1', generation: 2 },
    spec: { address: 'https://10.0.9.1' },
    ...overrides,
  } as ServerBMC;
}

const secrets = (values: Record<string, string>): SecretReader => ({
  read: async ref => {
    const value = values[`${ref.name}/${ref.key}`];
    if (value === undefined)
      throw new Error(`no key ${ref.key} in ${ref.name}`);
    return value;
  },
});

function reads(more: Partial<ServerBmcReads> = {}): ServerBmcReads {
  return {
    node: name => (name === 'worker-1' ? testNode('worker-1') : undefined),
    secrets: secrets({}),
    now: () => AT,
    ...more,
  };
}

describe('the ServerBMC table', () => {
  it('is Checked once status.observedGeneration is the generation, Unchecked before', () => {
    expect(stateOf(bmc())).toBe('Unchecked');
    expect(stateOf(bmc({ status: { observedGeneration: 1 } }))).toBe(
      'Unchecked',
    );
    expect(stateOf(bmc({ status: { observedGeneration: 2 } }))).toBe('Checked');
    // Without a generation (an object not from the apiserver) it is always checked again.
    expect(stateOf(bmc({ metadata: { name: 'worker-1' }, status: {} }))).toBe(
      'Unchecked',
    );
  });

  it('Checked is finished: nothing is read or written', async () => {
    const node = jest.fn();
    const decision = await serverBmcTable.Checked(
      bmc({ status: { observedGeneration: 2 } }),
      reads({ node }),
    );
    expect(decision).toEqual({ kind: 'done' });
    expect(node).not.toHaveBeenCalled();
  });

  it('Unchecked records Ready True with where the system is found', async () => {
    const decision = await serverBmcTable.Unchecked(bmc(), reads());
    expect(decision).toEqual({
      kind: 'record',
      status: {
        systemPath: undefined,
        message:
          "BMC https://10.0.9.1; the system is found by the node's system UUID when first used",
        conditions: [
          {
            type: 'Ready',
            status: 'True',
            reason: 'Configured',
            message: 'The BMC is configured.',
            observedGeneration: 2,
            lastTransitionTime: AT,
          },
        ],
        observedGeneration: 2,
      },
    });
  });

  it('Unchecked records Ready False naming a missing Node and unreadable credentials', async () => {
    const decision = await serverBmcTable.Unchecked(
      bmc({
        metadata: { name: 'worker-9', generation: 3 },
        spec: {
          address: 'https://10.0.9.9',
          systemPath: '/redfish/v1/Systems/1',
          credentialsSecretRef: {
            name: 'bmc-9',
            usernameKey: 'username',
            passwordKey: 'password',
          },
        },
      } as Partial<ServerBMC>),
      reads({ secrets: secrets({ 'bmc-9/username': 'admin' }) }),
    );
    expect(decision.kind).toBe('record');
    const status = (decision as Extract<typeof decision, { kind: 'record' }>)
      .status;
    expect(status.message).toBe(
      'no Node named worker-9; credentials: no key password in bmc-9',
    );
    expect(status.systemPath).toBe('/redfish/v1/Systems/1');
    expect(status.conditions).toEqual([
      expect.objectContaining({
        type: 'Ready',
        status: 'False',
        reason: 'Misconfigured',
        observedGeneration: 3,
      }),
    ]);
    expect(status.observedGeneration).toBe(3);
  });

  it('the reconciler writes an Unchecked BMC once and a Checked one never', async () => {
    const writes: unknown[] = [];
    const ports = {
      ...reads(),
      writeStatus: async (status: unknown) => {
        writes.push(status);
      },
    };
    await reconcileServerBmc(bmc(), ports);
    expect(writes).toHaveLength(1);
    await reconcileServerBmc(bmc({ status: { observedGeneration: 2 } }), ports);
    expect(writes).toHaveLength(1);
  });
});
