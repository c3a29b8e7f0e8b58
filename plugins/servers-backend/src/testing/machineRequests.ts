/*
 * The machine action requests as the router parses them (the parsers of
 * machines/MachinesService.ts), against the plant of fakeMachines.ts, for the unit tests of the
 * machines feature's layers.
 */
import {
  parseAddDiscoveryAddressCommand,
  parseConfirmReclaimCommand,
  parseCreateReclaimCommand,
  parseJoinMachineCommand,
  type MachineAction,
  type MachineRequest,
  type MachinesService,
  type MachineTarget,
} from '../machines/MachinesService';
import {
  FakeMachines,
  fakeReclaim,
  fakeTalosCluster,
  fakeTalosMachine,
} from './fakeMachines';
import { foreignTalosconfig } from './foreignTalosconfig';

export const MACHINE_REASON = 'replace plant-old worker, ticket OPS-42';
/** A Pending machine of the plant, at 127.0.10.31. */
export const SPARE_UUID = 'bba72157-81f6-43fd-9ddd-4684b42f4bd9';
/** The machine at 127.0.10.42 that the plant's reclaim-1 read. */
export const FOREIGN_UUID = 'bd49731e-ab42-45d9-9f81-6c7d0e506bdf';

/**
 * `cluster`'s machine side: a TalosCluster listing a spare and a foreign machine, the
 * spare Pending, and a reclaim of the foreign machine awaiting its typed UUID.
 */
export function machinePlant(cluster = 'plant-a'): FakeMachines {
  return new FakeMachines(cluster, {
    clusters: [
      fakeTalosCluster(cluster, {
        addresses: ['127.0.10.31', '127.0.10.42'],
        status: [
          { address: '127.0.10.31', state: 'Maintenance', uuid: SPARE_UUID },
          { address: '127.0.10.42', state: 'AlreadyConfigured' },
        ],
      }),
    ],
    machines: [
      fakeTalosMachine(SPARE_UUID, cluster, { address: '127.0.10.31' }),
    ],
    reclaims: [
      fakeReclaim('reclaim-1', '127.0.10.42', cluster, {
        phase: 'AwaitingConfirmation',
        machineUUID: FOREIGN_UUID,
        expiresAt: new Date(Date.now() + 10 * 60_000).toISOString(),
      }),
    ],
  });
}

/** One request the router would hand on: its target, parsed into its command. */
function parsed<C>(
  action: MachineAction,
  path: MachineTarget['path'],
  sent: unknown,
  parse: (path: Record<string, string>, body: unknown) => C,
): MachineRequest<C> {
  return { target: { action, path, sent }, command: parse(path, sent) };
}

/** A valid request of each action for `cluster`, by the name of its method. */
export function machineRequests(cluster = 'plant-a') {
  return {
    addDiscoveryAddress: parsed(
      'addDiscoveryAddress',
      { cluster },
      { address: '127.0.10.32', reason: MACHINE_REASON },
      parseAddDiscoveryAddressCommand,
    ),
    joinMachine: parsed(
      'joinMachine',
      { cluster, uuid: SPARE_UUID },
      { reason: MACHINE_REASON },
      parseJoinMachineCommand,
    ),
    createReclaim: parsed(
      'createReclaim',
      { cluster },
      {
        address: '127.0.10.43',
        talosconfig: foreignTalosconfig(),
        reason: MACHINE_REASON,
      },
      parseCreateReclaimCommand,
    ),
    confirmReclaim: parsed(
      'confirmReclaim',
      { cluster, name: 'reclaim-1' },
      { uuid: FOREIGN_UUID },
      parseConfirmReclaimCommand,
    ),
  } satisfies {
    [A in MachineAction]: Parameters<MachinesService[A]>[1];
  };
}
