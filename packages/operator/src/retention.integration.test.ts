/*
 * Retention on the simulated rack, with a retention of a few seconds: a Complete
 * maintenance and a Refused reclaim are deleted once that long has passed since they
 * ended (not before), with a RetentionExpired Event from the leader; a maintenance still
 * parked in Cordoned is kept however old it is. A standby runs beside the leader and
 * deletes nothing.
 */
import {
  credentialSecretName,
  machineReclaimResource,
  type MachineReclaim,
} from '@rackside/plugin-servers-common';
import { ResourceClient } from '@rackside/plugin-servers-node';
import type { Operator } from './operator';
import {
  ADMIN_USER,
  flag,
  OPERATOR_NAMESPACE as NS,
  startOperatorRack,
  type OperatorRack,
} from './testing/operatorRack';

jest.setTimeout(120_000);

const RETENTION_MS = 4000;

let env: OperatorRack;
let leader: Operator | undefined;
let standby: Operator | undefined;
let reclaims: ResourceClient<MachineReclaim>;

/** Waits until the object is gone; returns when this test first saw it gone. */
async function goneAt(
  what: string,
  exists: () => Promise<unknown | undefined>,
): Promise<number> {
  return env.waitFor(
    `${what} deleted`,
    async () => ((await exists()) === undefined ? Date.now() : undefined),
    60_000,
  );
}

async function eventsOf(name: string, namespace = 'default') {
  const list = await env.core.listNamespacedEvent({
    namespace,
    fieldSelector: `involvedObject.name=${name}`,
  });
  return list.items;
}

beforeAll(async () => {
  env = await startOperatorRack({
    withTalos: false,
    withRedfish: false,
    withWorkloads: false,
  });
  reclaims = new ResourceClient<MachineReclaim>(
    env.admin,
    machineReclaimResource,
  );
  leader = await env.start({ identity: 'leader', retentionMs: RETENTION_MS });
  await env.waitFor('leader leads', async () => leader!.isLeader());
  standby = await env.start({ identity: 'standby', retentionMs: RETENTION_MS });
  await env.waitFor('standby synced', async () => standby!.isReady());
}, 240_000);

afterAll(async () => {
  await standby?.stop();
  await leader?.stop();
  await env?.stop();
}, 60_000);

describe('retention', () => {
  it('deletes a Complete maintenance and a Refused reclaim once the retention has passed since they ended, and keeps one that has not ended', async () => {
    // Older than everything else here, and never terminal: it must stay.
    await env.create('parked', 'worker-5', 'cordon');
    await env.phaseIs('parked', 'Cordoned');

    await env.create('done', 'worker-6', 'cordon');
    await env.phaseIs('done', 'Cordoned');
    await env.nms.patch('done', { spec: { returnToService: flag } } as any);
    const complete = await env.phaseIs('done', 'Complete');
    const endedAt = Date.parse(
      complete.status!.history!.find(h => h.phase === 'Complete')!.at,
    );

    // A reclaim for a TalosCluster that does not exist: Refused at once.
    await reclaims.create({
      apiVersion: machineReclaimResource.apiVersion,
      kind: 'MachineReclaim',
      metadata: { name: 'nowhere', namespace: NS },
      spec: {
        address: '10.0.2.191',
        targetCluster: 'no-such-cluster',
        credentialSecretRef: {
          name: credentialSecretName('nowhere'),
          key: 'talosconfig',
        },
        ttlMinutes: 15,
        reason: 'retention test',
        requestedBy: ADMIN_USER,
      },
    } as MachineReclaim);
    const refused = await env.waitFor('reclaim Refused', async () => {
      const got = await reclaims.find('nowhere', { namespace: NS });
      return got?.status?.phase === 'Refused' && got;
    });
    const reclaimEndedAt = Date.parse(refused.status!.audit!.at(-1)!.at);

    const doneGone = await goneAt('the Complete maintenance', () =>
      env.nms.find('done'),
    );
    // Not before its time (the history's timestamps are this host's clock).
    expect(doneGone).toBeGreaterThanOrEqual(endedAt + RETENTION_MS);
    const reclaimGone = await goneAt('the Refused reclaim', () =>
      reclaims.find('nowhere', { namespace: NS }),
    );
    expect(reclaimGone).toBeGreaterThanOrEqual(reclaimEndedAt + RETENTION_MS);

    // Both deletions are on record, by the leader only.
    const [doneEvents, reclaimEvents] = await Promise.all([
      env.waitFor('RetentionExpired on done', async () => {
        const list = (await eventsOf('done')).filter(
          e => e.reason === 'RetentionExpired',
        );
        return list.length > 0 && list;
      }),
      env.waitFor('RetentionExpired on nowhere', async () => {
        const list = (await eventsOf('nowhere', NS)).filter(
          e => e.reason === 'RetentionExpired',
        );
        return list.length > 0 && list;
      }),
    ]);
    for (const list of [doneEvents, reclaimEvents]) {
      expect(list).toHaveLength(1);
      expect(list[0].reportingInstance).toBe('leader');
    }
    expect(doneEvents[0].message).toMatch(
      /NodeMaintenance done ended at .* \(phase Complete\), retention 4 s/,
    );
    expect(reclaimEvents[0].message).toMatch(/phase Refused/);

    // Older than the retention by now, but not ended: kept, no Event.
    const parked = await env.nms.get('parked');
    expect(parked.status?.phase).toBe('Cordoned');
    expect(
      Date.now() - Date.parse(parked.metadata.creationTimestamp!),
    ).toBeGreaterThan(RETENTION_MS);
    expect(
      (await eventsOf('parked')).filter(e => e.reason === 'RetentionExpired'),
    ).toEqual([]);
    const text = await leader!.metrics.render();
    expect(text.body).toContain(
      'rackside_retention_deletions_total{kind="NodeMaintenance"} 1',
    );
    expect(text.body).toContain(
      'rackside_retention_deletions_total{kind="MachineReclaim"} 1',
    );
    expect((await standby!.metrics.render()).body).not.toMatch(
      /rackside_retention_deletions_total\{/,
    );
  });
});
