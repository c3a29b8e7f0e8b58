import { examples } from './fixtures';
import { nodeMaintenanceSchema } from './nodeMaintenance';

const IMAGE = 'factory.talos.dev/installer/abc:v1.12.0';

function parse(spec: Record<string, unknown>) {
  const input = examples.nodeMaintenance();
  return nodeMaintenanceSchema.safeParse({
    ...input,
    spec: { ...input.spec, ...spec },
  });
}

describe('spec.upgrade of a NodeMaintenance', () => {
  it('is taken with intent upgrade', () => {
    const result = parse({
      intent: 'upgrade',
      upgrade: { image: IMAGE, force: true },
    });
    expect(result.success).toBe(true);
    expect(result.data?.spec.upgrade).toEqual({ image: IMAGE, force: true });
  });

  it('is required with intent upgrade', () => {
    const result = parse({ intent: 'upgrade' });
    expect(result.success).toBe(false);
    expect(result.error?.message).toMatch(
      /upgrade is required with intent upgrade/,
    );
  });

  it('applies to no other intent', () => {
    const result = parse({ intent: 'reboot', upgrade: { image: IMAGE } });
    expect(result.success).toBe(false);
    expect(result.error?.message).toMatch(/applies to no other intent/);
  });

  it('refuses an image reference past the length limit', () => {
    const result = parse({
      intent: 'upgrade',
      upgrade: { image: `r.example/${'a'.repeat(600)}:v1.12.0` },
    });
    expect(result.success).toBe(false);
  });

  it('keeps the versions before and after in status', () => {
    const input = examples.nodeMaintenance();
    const result = nodeMaintenanceSchema.safeParse({
      ...input,
      spec: { ...input.spec, intent: 'upgrade', upgrade: { image: IMAGE } },
      status: {
        phase: 'Returning',
        upgrade: {
          image: IMAGE,
          fromVersion: 'v1.11.3',
          toVersion: 'v1.12.0',
          sentAt: '2026-08-04T10:06:01Z',
          cameBackOn: 'v1.12.0',
        },
        power: {
          upgrade: {
            recordedAt: '2026-08-04T10:06:00Z',
            sentAt: '2026-08-04T10:06:01Z',
            channel: 'talos',
          },
        },
      },
    });
    expect(result.success).toBe(true);
  });
});
