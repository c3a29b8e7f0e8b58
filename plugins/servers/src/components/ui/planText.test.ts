import type { PlanResponse } from '@rackside/plugin-servers-common';
import { waitingText } from './planText';

const plan = (waiting: object) => ({ waiting } as unknown as PlanResponse);

describe('waitingText', () => {
  it('names the alert gate and the alerts that hold it', () => {
    expect(
      waitingText(
        plan({
          on: 'gate',
          gate: 'alerts',
          since: '2026-08-04T10:00:00Z',
          message: 'alerts firing: NodeDown (worker-7, critical)',
        }),
      ),
    ).toMatch(
      /^Waiting on the gate alerts since .*: alerts firing: NodeDown \(worker-7, critical\)$/,
    );
  });

  it("says a step waits for its servers' healthy return, and until when", () => {
    expect(
      waitingText(
        plan({
          on: 'healthyReturn',
          since: '2026-08-04T10:00:00Z',
          until: '2026-08-04T10:10:00Z',
          message: 'worker-1 Ready for 20 s of 60',
        }),
      ),
    ).toMatch(
      /^Waiting on the step's healthy return since .*: worker-1 Ready for 20 s of 60 It times out at /,
    );
  });
});
