import type { ServerBMC } from '@rackside/plugin-servers-common';
import { hardwareKnowledgeChanged } from './hardwareReading';

const NOW = Date.parse('2026-12-07T12:00:00Z');
const bmc = (health?: Record<string, unknown>): ServerBMC =>
  ({
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'ServerBMC',
    metadata: { name: 'worker-1' },
    spec: { address: 'https://10.0.5.21' },
    ...(health
      ? {
          status: {
            health: {
              rollup: 'OK',
              parts: [],
              logEntries: [],
              firmware: [],
              missing: [],
              sweepIntervalSeconds: 900,
              ...health,
            },
          },
        }
      : {}),
  } as ServerBMC);

describe('hardwareKnowledgeChanged', () => {
  it('wakes on unknown to OK, OK to Critical, and a first reading', () => {
    const fresh = bmc({ readAt: new Date(NOW - 60_000).toISOString() });
    const failed = bmc({
      readAt: new Date(NOW - 60_000).toISOString(),
      error: 'timeout',
    });
    expect(hardwareKnowledgeChanged(fresh, failed, NOW)).toBe(true);
    expect(
      hardwareKnowledgeChanged(
        bmc({ rollup: 'Critical', readAt: new Date(NOW).toISOString() }),
        fresh,
        NOW,
      ),
    ).toBe(true);
    expect(hardwareKnowledgeChanged(fresh, bmc(), NOW)).toBe(true);
  });

  it('does not wake on a new readAt of the same fresh OK reading', () => {
    expect(
      hardwareKnowledgeChanged(
        bmc({ readAt: new Date(NOW).toISOString() }),
        bmc({ readAt: new Date(NOW - 60_000).toISOString() }),
        NOW,
      ),
    ).toBe(false);
  });
});
