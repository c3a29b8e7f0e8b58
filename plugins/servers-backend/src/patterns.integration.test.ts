/*
 * A person's pattern on the backend's event loop (docs/limits.md, "Patterns"), against the
 * rack's real Alertmanager: the plan pre-flight runs an alert gate's patterns over every
 * alert of the cluster. With a backtracking engine, `(.|.|.|.)*!` over a 30-character
 * alert name never finished and every other request of the portal hung behind it.
 */
import { startTestRack, type TestRack } from '@rackside/rack-testing';
import request from 'supertest';
import {
  installRackside,
  startServersBackendOnRack,
} from './testing/rackBackend';

jest.setTimeout(90_000);

type Obj = Record<string, any>;

let rack: TestRack | undefined;
let server: Parameters<typeof request>[0];

// 30 characters, as in the report.
const LONG_NAMES = Array.from(
  { length: 20 },
  (_, i) => `NodeFilesystemAlmostOutOfSpac${String.fromCharCode(97 + i)}`,
);

beforeAll(async () => {
  rack = await startTestRack({ withTalos: false, withRedfish: false });
  const alertmanagerUrl = (rack.info.alertmanager as { url: string }).url;
  const posted = await fetch(`${alertmanagerUrl}/api/v2/alerts`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(
      LONG_NAMES.map((alertname, i) => ({
        labels: { alertname, node: `worker-${(i % 6) + 1}`, severity: 'info' },
      })),
    ),
  });
  if (posted.status !== 200) {
    throw new Error(`Alertmanager took no alerts: ${posted.status}`);
  }
  const rackside = await installRackside(rack);
  server = (
    await startServersBackendOnRack({
      rack,
      token: rackside.backstageToken,
      cluster: { alertmanager: { url: alertmanagerUrl } },
    })
  ).server;
}, 240_000);

afterAll(async () => {
  await rack?.stop();
}, 60_000);

const preflight = (alertGate: unknown) =>
  request(server)
    .get('/api/servers/clusters/plant-a/plans/preflight')
    .query({
      intent: 'drain',
      nodes: 'worker-4',
      alertGate: JSON.stringify(alertGate),
    });

/** The fastest of three answers, in milliseconds, with the last answer. */
async function fastest(send: () => Promise<request.Response>) {
  let best = Infinity;
  let last: request.Response | undefined;
  for (let i = 0; i < 3; i++) {
    const started = process.hrtime.bigint();
    last = await send();
    best = Math.min(best, Number(process.hrtime.bigint() - started) / 1e6);
  }
  return { ms: best, res: last! };
}

describe('patterns in the plan pre-flight', () => {
  it('answers a pathological gate pattern at once, and the portal answers meanwhile', async () => {
    const health = request(server).get('/api/servers/health');
    const gated = preflight({ alertnames: '(.|.|.|.)*!' });
    const [healthRes, gatedRes] = await Promise.all([health, gated]);
    expect(healthRes.status).toBe(200);
    expect(gatedRes.status).toBe(200);
    expect(gatedRes.body.alerts).toMatchObject({ known: true, holding: [] });
    // The same pattern that would match: linear, and the alerts are all seen.
    const all = await preflight({ alertnames: '(.|.|.|.)*' });
    expect(all.body.alerts.holding.map((a: Obj) => a.alertname).sort()).toEqual(
      [...LONG_NAMES].sort(),
    );
  });

  it.each([
    ['alertnames', { alertnames: '(Node.*)\\1' }],
    ['a matcher', { matchers: ['alertname=~"(?=Node)Node.*"'] }],
  ])(
    'refuses %s RE2 cannot run with a 400 naming it, in under 100 ms',
    async (_what, gate) => {
      const { ms, res } = await fastest(() => preflight(gate));
      expect(res.status).toBe(400);
      expect(res.body.error.message).toMatch(
        /alertGate.*not a valid RE2 regular expression/,
      );
      expect(ms).toBeLessThan(100);
    },
  );

  it("refuses a pattern past the gate's length cap before compiling it", async () => {
    const res = await preflight({ alertnames: `(a|a)*${'a'.repeat(300)}` });
    expect(res.status).toBe(400);
    expect(res.body.error.message).toMatch(
      /alertGate\.alertnames must be a regular expression of 1 to 256 characters/,
    );
  });
});
