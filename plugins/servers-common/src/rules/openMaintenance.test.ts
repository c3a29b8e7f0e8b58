import { deriveQuorum, type MaintenancePhase, type NodeFacts } from './quorum';
import {
  isOpen,
  openMaintenanceByNode,
  openMaintenanceOf,
  quorumMaintenances,
  type MaintenanceRecord,
} from './openMaintenance';

function m(
  name: string,
  nodeName: string,
  phase?: MaintenancePhase,
  createdAt = '2026-01-01T00:00:00Z',
  intent: MaintenanceRecord['spec']['intent'] = 'reboot',
): MaintenanceRecord {
  return {
    metadata: { name, creationTimestamp: createdAt },
    spec: { nodeName, intent },
    status: phase ? { phase } : undefined,
  };
}

const members: NodeFacts[] = ['cp-1', 'cp-2', 'cp-3'].map(name => ({
  name,
  controlPlane: true,
  ready: true,
  virtual: false,
}));

describe('which maintenances count toward quorum', () => {
  it('counts an admitted open reboot as going down, not one still unadmitted or ended', () => {
    const facts = quorumMaintenances([
      m('a', 'cp-1', 'Draining'),
      m('b', 'cp-2'),
      m('c', 'cp-3', 'Complete'),
    ]);
    expect(facts).toEqual([
      { nodeName: 'cp-1', intent: 'reboot', phase: 'Draining' },
    ]);
    const derivation = deriveQuorum(members, facts);
    expect(derivation).toMatchObject({ ready: 2, goingDown: ['cp-1'] });
  });

  it('counts no reboot held for approval: it is admitted only once approved', () => {
    expect(quorumMaintenances([m('a', 'cp-1', 'AwaitingApproval')])).toEqual(
      [],
    );
    // Open all the same: it keeps its node busy, as a request not yet admitted does.
    expect(isOpen(m('a', 'cp-1', 'AwaitingApproval'))).toBe(true);
    expect(
      openMaintenanceOf('cp-1', [
        m('later', 'cp-1', undefined, '2026-01-01T00:00:01Z'),
        m('held', 'cp-1', 'AwaitingApproval'),
      ])?.metadata.name,
    ).toBe('held');
  });
});

describe('the open maintenance of a node', () => {
  it('is the admitted one, else the first asked for; ended ones are never open', () => {
    const older = m('older', 'w-1', undefined, '2026-01-01T00:00:00Z');
    const admitted = m('admitted', 'w-1', 'Cordoned', '2026-01-01T00:00:05Z');
    const newer = m('newer', 'w-1', undefined, '2026-01-01T00:00:09Z');
    const ended = m('ended', 'w-1', 'Failed', '2025-12-01T00:00:00Z');
    expect(isOpen(ended)).toBe(false);
    expect(isOpen(older)).toBe(true);
    expect(openMaintenanceOf('w-1', [newer, ended, admitted, older])).toBe(
      admitted,
    );
    expect(openMaintenanceOf('w-1', [newer, ended, older])).toBe(older);
    expect(openMaintenanceOf('w-1', [ended])).toBeUndefined();
    expect(openMaintenanceOf('w-2', [older])).toBeUndefined();
  });

  it('breaks a tie of creation time by name, the same whatever the list order', () => {
    const a = m('a', 'w-1');
    const b = m('b', 'w-1');
    expect(openMaintenanceOf('w-1', [a, b])).toBe(a);
    expect(openMaintenanceOf('w-1', [b, a])).toBe(a);
  });

  it('by node gives what openMaintenanceOf gives for each node', () => {
    const all = [
      m('x2', 'w-1', undefined, '2026-01-01T00:00:02Z'),
      m('x1', 'w-1', undefined, '2026-01-01T00:00:01Z'),
      m('y', 'w-2', 'Drained'),
      m('z', 'w-3', 'Complete'),
    ];
    const byNode = openMaintenanceByNode(all);
    expect([...byNode.keys()].sort()).toEqual(['w-1', 'w-2']);
    for (const node of ['w-1', 'w-2', 'w-3']) {
      expect(byNode.get(node)).toBe(openMaintenanceOf(node, all));
    }
  });
});
