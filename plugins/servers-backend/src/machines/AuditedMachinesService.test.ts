/*
 * The audit layer of the machines feature: every action opens one auditor event with
 * its id and severity before anything else happens, and closes it as a success with
 * the outcome or as a failure with the error's outcome and what the call learnt on the
 * way; a request the edge refused leaves the same event; every read is `machine-read`.
 */
import { mockCredentials, mockServices } from '@backstage/backend-test-utils';
import { InputError, NotAllowedError } from '@backstage/errors';
import type { RecordedAuditEvent } from '../testing/testBackend';
import {
  MACHINE_REASON,
  machineRequests,
  SPARE_UUID,
} from '../testing/machineRequests';
import { AuditedMachinesService } from './AuditedMachinesService';
import {
  MACHINE_ACTIONS,
  type MachineAction,
  type MachineCallContext,
  type MachinesService,
} from './MachinesService';

const user = mockCredentials.user();
const ME = user.principal.userEntityRef;

/** The event and severity each action is recorded as. */
const EXPECTED: Record<MachineAction, [string, string]> = {
  addDiscoveryAddress: ['machine-discovery-address-add', 'medium'],
  joinMachine: ['machine-join', 'medium'],
  createReclaim: ['machine-reclaim-create', 'critical'],
  confirmReclaim: ['machine-reclaim-confirm', 'critical'],
};

/**
 * The audit layer over a service whose every call runs `answer` (given what the call
 * may note for the record), and the events it made.
 */
function service(
  answer: (call: MachineCallContext | undefined) => Promise<unknown>,
) {
  const events: RecordedAuditEvent[] = [];
  const auditor = mockServices.auditor.mock({
    createEvent: async options => {
      const entry: RecordedAuditEvent = { options };
      events.push(entry);
      return {
        success: async o => {
          entry.outcome = 'success';
          entry.meta = o?.meta;
        },
        fail: async o => {
          entry.outcome = 'fail';
          entry.meta = o.meta;
          entry.error = o.error;
        },
      };
    },
  });
  const run = (call?: MachineCallContext) => answer(call) as Promise<any>;
  const inner: MachinesService = {
    machines: (_c, _cluster, call) => run(call),
    canReclaim: (_c, _cluster, call) => run(call),
    reclaims: (_c, _cluster, call) => run(call),
    reclaim: (_c, _cluster, _name, call) => run(call),
    addDiscoveryAddress: (_c, _r, call) => run(call),
    joinMachine: (_c, _r, call) => run(call),
    createReclaim: (_c, _r, call) => run(call),
    confirmReclaim: (_c, _r, call) => run(call),
  };
  return { events, machines: new AuditedMachinesService(inner, auditor) };
}

/** Calls `action` with its valid request. */
function callAction(machines: AuditedMachinesService, action: MachineAction) {
  const requests = machineRequests();
  switch (action) {
    case 'addDiscoveryAddress':
      return machines.addDiscoveryAddress(user, requests.addDiscoveryAddress);
    case 'joinMachine':
      return machines.joinMachine(user, requests.joinMachine);
    case 'createReclaim':
      return machines.createReclaim(user, requests.createReclaim);
    default:
      return machines.confirmReclaim(user, requests.confirmReclaim);
  }
}

describe('AuditedMachinesService', () => {
  it.each(MACHINE_ACTIONS)(
    '%s: one event with its severity, closed with the outcome',
    async action => {
      const { machines, events } = service(async call => {
        call!.learnt!.talosCluster = 'plant-a';
        return { answer: {}, outcome: 'done' };
      });
      await callAction(machines, action);
      const [eventId, severityLevel] = EXPECTED[action];
      expect(events).toHaveLength(1);
      expect(events[0].options).toMatchObject({
        eventId,
        severityLevel,
        meta: { actor: ME, cluster: 'plant-a' },
      });
      expect(events[0]).toMatchObject({
        outcome: 'success',
        meta: { actor: ME, talosCluster: 'plant-a', outcome: 'done' },
      });
    },
  );

  it.each(MACHINE_ACTIONS)(
    '%s: a failure fails its one event with the outcome of the error and what was learnt',
    async action => {
      const { machines, events } = service(async call => {
        call!.learnt!.reclaim = 'reclaim-9';
        throw new NotAllowedError('you are not allowed');
      });
      await expect(callAction(machines, action)).rejects.toThrow(
        NotAllowedError,
      );
      const [eventId, severityLevel] = EXPECTED[action];
      expect(events).toHaveLength(1);
      expect(events[0].options).toMatchObject({ eventId, severityLevel });
      expect(events[0]).toMatchObject({
        outcome: 'fail',
        meta: { actor: ME, reclaim: 'reclaim-9', outcome: 'denied' },
      });
    },
  );

  it('records what was sent, never the talosconfig', async () => {
    const { machines, events } = service(async () => ({
      answer: {},
      outcome: 'created',
    }));
    await callAction(machines, 'createReclaim');
    await callAction(machines, 'joinMachine');
    expect(events.map(e => e.options.meta)).toEqual([
      {
        actor: ME,
        cluster: 'plant-a',
        address: '127.0.10.43',
        reason: MACHINE_REASON,
        ttlMinutes: null,
      },
      {
        actor: ME,
        cluster: 'plant-a',
        machine: SPARE_UUID,
        reason: MACHINE_REASON,
      },
    ]);
  });

  it.each(MACHINE_ACTIONS)(
    '%s: a request the edge refused leaves the same event, failed',
    async action => {
      const { machines, events } = service(async () => {
        throw new Error('the service is not called');
      });
      const { target } = machineRequests()[action];
      await machines.auditRefused(target, new NotAllowedError('no user'), {
        actor: null,
      });
      await machines.auditRefused(target, new InputError('bad body'), {
        actor: ME,
      });
      const [eventId, severityLevel] = EXPECTED[action];
      expect(
        events.map(e => [
          e.options.eventId,
          e.options.severityLevel,
          e.outcome,
          e.meta.actor,
          e.meta.outcome,
        ]),
      ).toEqual([
        [eventId, severityLevel, 'fail', null, 'unauthenticated'],
        [eventId, severityLevel, 'fail', ME, 'invalid'],
      ]);
    },
  );

  it('records every read as machine-read at low severity, a failed one failed', async () => {
    let fail = false;
    const { machines, events } = service(async () => {
      if (fail) throw new NotAllowedError('no');
      return {};
    });
    await machines.machines(user, 'plant-a');
    await machines.canReclaim(user, 'plant-a');
    await machines.reclaims(user, 'plant-a');
    fail = true;
    await expect(
      machines.reclaim(user, 'plant-a', 'reclaim-1'),
    ).rejects.toThrow(NotAllowedError);
    expect(
      events.map(e => [
        e.options.eventId,
        e.options.severityLevel,
        e.options.meta.read,
        e.options.meta.via,
        e.outcome,
      ]),
    ).toEqual([
      ['machine-read', 'low', 'machines', 'http', 'success'],
      ['machine-read', 'low', 'can-reclaim', 'http', 'success'],
      ['machine-read', 'low', 'reclaims', 'http', 'success'],
      ['machine-read', 'low', 'reclaim', 'http', 'fail'],
    ]);
    expect(events[3].options.meta).toMatchObject({
      actor: ME,
      cluster: 'plant-a',
      reclaim: 'reclaim-1',
    });
  });
});
