import { z } from 'zod';
import { RACKSIDE_API_VERSION } from './common';
import { machineReclaimSchema, type MachineReclaim } from './machineReclaim';
import { maintenancePlanSchema, type MaintenancePlan } from './maintenancePlan';
import { nodeMaintenanceSchema, type NodeMaintenance } from './nodeMaintenance';
import { racksideObjectSchema } from './object';
import { powerProviderSchema, type PowerProvider } from './powerProvider';
import { serverBmcSchema, type ServerBMC } from './serverBmc';
import { talosClusterSchema, type TalosCluster } from './talosCluster';
import { talosMachineSchema, type TalosMachine } from './talosMachine';

/** True when A and B are each assignable to the other. */
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;

describe('racksideObjectSchema', () => {
  const schema = racksideObjectSchema(
    'Example',
    z.object({ size: z.number() }),
    z.object({ phase: z.string() }),
  );

  it('reads the wrapper of a kind: its apiVersion, kind, metadata, spec and an optional status', () => {
    const object = {
      apiVersion: RACKSIDE_API_VERSION,
      kind: 'Example',
      metadata: { name: 'one', labels: { a: 'b' } },
      spec: { size: 3 },
    };
    expect(schema.parse(object)).toEqual(object);
    expect(
      schema.parse({ ...object, status: { phase: 'Done' } }).status,
    ).toEqual({ phase: 'Done' });
  });

  it('refuses another kind, another apiVersion, no name and a bad spec', () => {
    const object = {
      apiVersion: RACKSIDE_API_VERSION,
      kind: 'Example',
      metadata: { name: 'one' },
      spec: { size: 3 },
    };
    expect(schema.safeParse({ ...object, kind: 'Other' }).success).toBe(false);
    expect(
      schema.safeParse({ ...object, apiVersion: 'rackside.dev/v1' }).success,
    ).toBe(false);
    expect(schema.safeParse({ ...object, metadata: {} }).success).toBe(false);
    expect(
      schema.safeParse({ ...object, spec: { size: 'three' } }).success,
    ).toBe(false);
  });

  it('gives every kind the type its exported alias of RacksideObject names', () => {
    // A compile-time check: tsc fails here when a kind's schema and its alias part.
    const same: Array<true> = [
      true as Same<z.infer<typeof nodeMaintenanceSchema>, NodeMaintenance>,
      true as Same<z.infer<typeof maintenancePlanSchema>, MaintenancePlan>,
      true as Same<z.infer<typeof powerProviderSchema>, PowerProvider>,
      true as Same<z.infer<typeof serverBmcSchema>, ServerBMC>,
      true as Same<z.infer<typeof talosClusterSchema>, TalosCluster>,
      true as Same<z.infer<typeof talosMachineSchema>, TalosMachine>,
      true as Same<z.infer<typeof machineReclaimSchema>, MachineReclaim>,
    ];
    expect(same).toHaveLength(7);
  });
});
