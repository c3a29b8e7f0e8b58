import type {
  MachinesResponse,
  ReclaimResponse,
  TalosMachineResponse,
} from '@rackside/plugin-servers-common';
import type { MachinesApi } from '../api';

export const SPARE_UUID = 'bba72157-81f6-43fd-9ddd-4684b42f4bd9';
export const FOREIGN_UUID = 'bd49731e-ab42-45d9-9f81-6c7d0e506bdf';

/** A Pending machine in maintenance mode. */
export function pendingMachine(
  overrides: Partial<TalosMachineResponse> = {},
): TalosMachineResponse {
  return {
    uuid: SPARE_UUID,
    talosCluster: 'rack',
    phase: 'Pending',
    address: '127.0.10.31',
    ...overrides,
  };
}

/** The machine side of cluster `rack`: a spare, a foreign machine, a member. */
export function machinesOfRack(
  overrides: Partial<MachinesResponse> = {},
): MachinesResponse {
  return {
    cluster: 'rack',
    namespace: 'rackside-system',
    talosClusters: [
      {
        name: 'rack',
        namespace: 'rackside-system',
        intervalSeconds: 300,
        allowedNetworks: ['127.0.10.0/24'],
        talosPort: 50000,
        lastDiscoveryTime: '2026-12-01T10:00:00Z',
        conditions: [],
        addresses: [
          {
            address: '127.0.10.31',
            state: 'Maintenance',
            uuid: SPARE_UUID,
            addedByReclaim: false,
          },
          {
            address: '127.0.10.42',
            state: 'AlreadyConfigured',
            message: 'the server certificate is not signed by our CA',
            addedByReclaim: false,
          },
          {
            address: '127.0.10.11',
            state: 'Member',
            uuid: '616b6ad6-7dd3-45b0-bb99-71c859ec845e',
            addedByReclaim: false,
          },
        ],
      },
    ],
    machines: [
      pendingMachine(),
      {
        uuid: '616b6ad6-7dd3-45b0-bb99-71c859ec845e',
        talosCluster: 'rack',
        phase: 'Joined',
        address: '127.0.10.11',
        nodeName: 'cp-1',
      },
    ],
    ...overrides,
  };
}

/** A Reset and add request in a phase. */
export function reclaim(
  overrides: Partial<ReclaimResponse> = {},
): ReclaimResponse {
  return {
    name: 'reclaim-abc-1234',
    address: '127.0.10.42',
    targetCluster: 'rack',
    phase: 'Pending',
    terminal: false,
    confirmed: false,
    ttlMinutes: 15,
    audit: [],
    conditions: [],
    requestedBy: 'user:default/guest',
    reason: 'take over the old worker',
    ...overrides,
  };
}

/** A fake MachinesApi over `machinesOfRack()`. */
export function fakeMachinesApi(
  machines: MachinesResponse = machinesOfRack(),
  reclaims: ReclaimResponse[] = [],
) {
  const api = {
    listMachines: jest.fn(async () => machines),
    addDiscoveryAddress: jest.fn(async (_c: string, body: any) => ({
      talosCluster: 'rack',
      address: body.address,
    })),
    joinMachine: jest.fn(async (_c: string, uuid: string) => ({ name: uuid })),
    canReclaim: jest.fn(async () => ({ allowed: true })),
    createReclaim: jest.fn(async () => ({ name: 'reclaim-abc-1234' })),
    confirmReclaim: jest.fn(async () => ({ name: 'reclaim-abc-1234' })),
    listReclaims: jest.fn(async () => reclaims),
    getReclaim: jest.fn(async () => reclaim()),
  };
  return api as unknown as jest.Mocked<MachinesApi>;
}
