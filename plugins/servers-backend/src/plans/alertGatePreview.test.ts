import { InputError } from '@backstage/errors';
import type { AlertmanagerAlert } from '@rackside/plugin-servers-node';
import type { ClusterAlerts } from '../cluster/nodeAlerts';
import { alertGatePreview, parseAlertGateQuery } from './alertGatePreview';

function alert(
  fingerprint: string,
  labels: Record<string, string>,
  silencedBy: string[] = [],
): AlertmanagerAlert {
  return {
    fingerprint,
    labels,
    startsAt: '2026-01-01T00:00:00.000Z',
    status: {
      state: silencedBy.length ? 'suppressed' : 'active',
      silencedBy,
      inhibitedBy: [],
    },
  };
}

describe('parseAlertGateQuery', () => {
  it('is undefined without alertGate, and reads the body shape', () => {
    expect(parseAlertGateQuery(undefined)).toBeUndefined();
    expect(
      parseAlertGateQuery(
        JSON.stringify({
          matchers: ['team="storage"'],
          alertnames: 'Node.*',
          severities: ['critical'],
          ignoreSilencedByRackside: false,
        }),
      ),
    ).toEqual({
      matchers: ['team="storage"'],
      alertnames: 'Node.*',
      severities: ['critical'],
      ignoreSilencedByRackside: false,
    });
  });

  it('reads every field the plan dialog sends, includeSilenced and whenUnknown too', () => {
    expect(
      parseAlertGateQuery(
        JSON.stringify({
          severities: ['critical'],
          ignoreSilencedByRackside: true,
          includeSilenced: true,
          whenUnknown: 'Proceed',
        }),
      ),
    ).toEqual({
      severities: ['critical'],
      ignoreSilencedByRackside: true,
      includeSilenced: true,
      whenUnknown: 'Proceed',
    });
  });

  it.each([
    [['a', 'b'], /given once/],
    [
      '{"includeSilenced":"yes"}',
      /alertGate.includeSilenced must be true or false/,
    ],
    [
      '{"whenUnknown":"Maybe"}',
      /alertGate.whenUnknown must be Hold or Proceed/,
    ],
    ['{', /not JSON/],
    ['[]', /JSON object/],
    ['{"other":1}', /unknown field other/],
    [
      '{"alertnames":"Node("}',
      /alertGate\.alertnames "Node\(": not a valid (RE2 )?regular/,
    ],
    ['{"alertnames":""}', /alertGate.alertnames must be/],
    ['{"matchers":["team=storage"]}', /alertGate.matchers/],
    ['{"matchers":["node=\\"{{node}}\\""]}', /placeholders/],
    ['{"matchers":["x=~\\"(\\""]}', /not a valid (RE2 )?regular/],
    ['{"severities":"critical"}', /alertGate.severities must be a list/],
    [
      JSON.stringify({
        severities: Array.from({ length: 9 }, (_, i) => `s${i}`),
      }),
      /at most 8/,
    ],
    ['{"ignoreSilencedByRackside":"yes"}', /true or false/],
  ])('refuses %j with a 400 saying what is wrong', (value, message) => {
    expect(() => parseAlertGateQuery(value)).toThrow(InputError);
    expect(() => parseAlertGateQuery(value)).toThrow(message);
  });
});

describe('alertGatePreview', () => {
  const known: ClusterAlerts = {
    byNode: new Map([
      [
        'worker-1',
        [
          {
            fingerprint: 'a',
            alertname: 'NodeDown',
            state: 'firing',
            silencedBy: [],
            startsAt: '',
            labels: {},
          },
        ],
      ],
    ]),
    alerts: [
      alert('a', {
        alertname: 'NodeDown',
        node: 'worker-1',
        severity: 'critical',
      }),
      alert(
        'b',
        { alertname: 'NodeDown', node: 'worker-2', severity: 'warning' },
        ['mine'],
      ),
      alert('c', { alertname: 'Fan', node: 'worker-3', severity: 'critical' }, [
        'person',
      ]),
    ],
    racksideSilenceIds: new Set(['mine']),
    readAt: '2026-01-01T00:00:00.000Z',
  };

  it('anchors the alertnames regex, filters by severity and matchers, and names the nodes', () => {
    expect(alertGatePreview({ alertnames: 'Node' }, known).holding).toEqual([]);
    const held = alertGatePreview(
      {
        alertnames: 'Node.*',
        severities: ['critical'],
        matchers: ['node=~"worker-.*"'],
      },
      known,
    );
    expect(held).toMatchObject({ configured: true, known: true });
    expect(held.holding.map(a => [a.fingerprint, a.nodes])).toEqual([
      ['a', ['worker-1']],
    ]);
  });

  it("looks through Rackside's own silences only when asked, never through a person's", () => {
    expect(alertGatePreview({}, known).holding.map(a => a.fingerprint)).toEqual(
      ['a'],
    );
    expect(
      alertGatePreview({ ignoreSilencedByRackside: false }, known).holding.map(
        a => a.fingerprint,
      ),
    ).toEqual(['a', 'b']);
  });

  it('says unknown (the gate would not hold) without an Alertmanager or a first read', () => {
    expect(alertGatePreview({}, undefined)).toMatchObject({
      configured: false,
      known: false,
      holding: [],
    });
    expect(
      alertGatePreview(
        {},
        {
          byNode: new Map(),
          alerts: [],
          stale: { error: 'refused', since: '' },
        },
      ),
    ).toMatchObject({ configured: true, known: false, reason: 'refused' });
  });
});
