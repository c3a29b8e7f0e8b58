/*
 * The permission layer of the machines feature: an unknown cluster is a 404 before any
 * permission is asked, a refused permission a 403 that names it, a denied caller writes
 * nothing, and an allowed call reaches the service with the cluster found as its grant.
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { NotAllowedError, NotFoundError } from '@backstage/errors';
import {
  AuthorizeResult,
  type AuthorizePermissionRequest,
} from '@backstage/plugin-permission-common';
import { staticMachinesRegistry } from './machinesRegistry';
import { machinePlant, machineRequests } from '../testing/machineRequests';
import { AuthorizedMachinesService } from './AuthorizedMachinesService';
import { DefaultMachinesService } from './DefaultMachinesService';
import { MACHINE_ACTIONS, type MachineCallContext } from './MachinesService';

const user = mockCredentials.user();

/** The layer over the real service, with `denied` permissions refused. */
function service(denied: string[] = []) {
  const plant = machinePlant();
  const asked: AuthorizePermissionRequest[] = [];
  const permissions = mockServices.permissions.mock({
    authorize: async requests =>
      requests.map(r => {
        asked.push(r as AuthorizePermissionRequest);
        return {
          result: denied.includes(r.permission.name)
            ? AuthorizeResult.DENY
            : AuthorizeResult.ALLOW,
        };
      }),
  });
  const inner = new DefaultMachinesService({
    logger: mockServices.logger.mock(),
    reasonPolicy: { minLength: 10, maxLength: 500 },
  });
  const machines = new AuthorizedMachinesService(
    inner,
    permissions,
    staticMachinesRegistry([plant]),
  );
  return { plant, asked, inner, machines };
}

/** Every call of the service on `cluster`, each as a promise, by what it calls. */
function everyCall(
  machines: AuthorizedMachinesService,
  cluster: string,
): Array<[string, () => Promise<unknown>]> {
  const requests = machineRequests(cluster);
  return [
    ['machines', () => machines.machines(user, cluster)],
    ['reclaims', () => machines.reclaims(user, cluster)],
    ['reclaim', () => machines.reclaim(user, cluster, 'reclaim-1')],
    ['canReclaim', () => machines.canReclaim(user, cluster)],
    [
      'addDiscoveryAddress',
      () => machines.addDiscoveryAddress(user, requests.addDiscoveryAddress),
    ],
    ['joinMachine', () => machines.joinMachine(user, requests.joinMachine)],
    [
      'createReclaim',
      () => machines.createReclaim(user, requests.createReclaim),
    ],
    [
      'confirmReclaim',
      () => machines.confirmReclaim(user, requests.confirmReclaim),
    ],
  ];
}

describe('AuthorizedMachinesService', () => {
  it('answers 404 for an unknown cluster before it asks any permission', async () => {
    const { machines, asked } = service([
      'machines:read',
      'machines:add',
      'machines:reclaim',
    ]);
    for (const [name, call] of everyCall(machines, 'nope')) {
      await expect(call()).rejects.toThrow(NotFoundError);
      await expect(call()).rejects.toThrow('no cluster named nope');
      expect([name, asked]).toEqual([name, []]);
    }
  });

  it.each([
    ['machines', 'machines:read'],
    ['reclaims', 'machines:read'],
    ['reclaim', 'machines:read'],
    ['addDiscoveryAddress', 'machines:add'],
    ['joinMachine', 'machines:add'],
    ['createReclaim', 'machines:reclaim'],
    ['confirmReclaim', 'machines:reclaim'],
  ])('%s: 403 naming %s when it is refused', async (name, permission) => {
    const { machines, asked } = service([permission]);
    const call = new Map(everyCall(machines, 'plant-a')).get(name)!;
    const refusal = (await call().catch(error => error)) as Error;
    expect(refusal).toBeInstanceOf(NotAllowedError);
    expect(refusal.message).toContain(`(${permission})`);
    expect(asked.map(r => r.permission.name)).toEqual([permission]);
  });

  it('answers whether "Reset and add" is offered instead of a 403', async () => {
    const { machines } = service(['machines:reclaim']);
    await expect(machines.canReclaim(user, 'plant-a')).resolves.toEqual({
      allowed: false,
      reason: 'you do not hold machines:reclaim',
    });
  });

  it('a denied caller writes nothing', async () => {
    const { machines, plant } = service(['machines:add', 'machines:reclaim']);
    const actions = everyCall(machines, 'plant-a').filter(([name]) =>
      (MACHINE_ACTIONS as readonly string[]).includes(name),
    );
    expect(actions).toHaveLength(4);
    for (const [, call] of actions) {
      await expect(call()).rejects.toThrow(NotAllowedError);
    }
    expect(plant.writes).toEqual([]);
    expect(plant.secrets).toEqual([]);
  });

  it('hands an allowed call on with the cluster it found as the grant', async () => {
    const { machines, inner, plant } = service();
    const calls: Array<MachineCallContext | undefined> = [];
    jest
      .spyOn(inner, 'joinMachine')
      .mockImplementation(async (_c, _r, call) => {
        calls.push(call);
        return { answer: { name: 'x' }, outcome: 'join-requested' };
      });
    await machines.joinMachine(user, machineRequests().joinMachine, {
      via: 'http',
    });
    expect(calls).toEqual([{ via: 'http', grant: { state: plant } }]);
  });
});
