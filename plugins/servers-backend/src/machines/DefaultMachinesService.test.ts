/*
 * The machines service under the permission decorator answers nothing it was not
 * granted: called directly (a caller wired around AuthorizedMachinesService by
 * mistake), every read and every action is refused and nothing is written.
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { NotAllowedError } from '@backstage/errors';
import { machinePlant, machineRequests } from '../testing/machineRequests';
import { DefaultMachinesService } from './DefaultMachinesService';

function service() {
  const plant = machinePlant();
  const machines = new DefaultMachinesService({
    logger: mockServices.logger.mock(),
    reasonPolicy: { minLength: 10, maxLength: 500 },
  });
  return { plant, machines };
}

describe('DefaultMachinesService without a grant', () => {
  const user = mockCredentials.user();

  it('refuses every read', async () => {
    const { machines } = service();
    await expect(machines.machines(user, 'plant-a')).rejects.toThrow(
      NotAllowedError,
    );
    await expect(machines.canReclaim(user, 'plant-a')).rejects.toThrow(
      NotAllowedError,
    );
    await expect(machines.reclaims(user, 'plant-a')).rejects.toThrow(
      NotAllowedError,
    );
    await expect(
      machines.reclaim(user, 'plant-a', 'reclaim-1'),
    ).rejects.toThrow(NotAllowedError);
  });

  it('refuses every action and writes nothing', async () => {
    const { plant, machines } = service();
    const requests = machineRequests();
    await expect(
      machines.addDiscoveryAddress(user, requests.addDiscoveryAddress),
    ).rejects.toThrow(/no permission decision was made/);
    await expect(
      machines.joinMachine(user, requests.joinMachine),
    ).rejects.toThrow(/no permission decision was made/);
    await expect(
      machines.createReclaim(user, requests.createReclaim),
    ).rejects.toThrow(/no permission decision was made/);
    await expect(
      machines.confirmReclaim(user, requests.confirmReclaim),
    ).rejects.toThrow(/no permission decision was made/);
    expect(plant.writes).toEqual([]);
    expect(plant.secrets).toEqual([]);
  });

  it('with a grant, carries out the same requests', async () => {
    const { plant, machines } = service();
    const requests = machineRequests();
    const granted = { grant: { state: plant } };
    const outcomes = [
      await machines.addDiscoveryAddress(
        user,
        requests.addDiscoveryAddress,
        granted,
      ),
      await machines.joinMachine(user, requests.joinMachine, granted),
      await machines.createReclaim(user, requests.createReclaim, granted),
      await machines.confirmReclaim(user, requests.confirmReclaim, granted),
    ].map(r => r.outcome);
    expect(outcomes).toEqual([
      'address-added',
      'join-requested',
      'created',
      'confirmed',
    ]);
    expect(plant.secrets).toHaveLength(1);
  });
});
