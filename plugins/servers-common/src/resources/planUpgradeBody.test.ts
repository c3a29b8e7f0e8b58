import { maintenancePlanSchema } from './maintenancePlan';

const IMAGE = 'factory.talos.dev/installer/abc:v1.12.0';

function parse(spec: Record<string, unknown>, status?: unknown) {
  return maintenancePlanSchema.safeParse({
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'MaintenancePlan',
    metadata: { name: 'talos-1-12' },
    spec: { nodes: ['worker-1'], reason: 'Talos 1.12', ...spec },
    ...(status ? { status } : {}),
  });
}

describe('the body of an upgrade or firmware plan', () => {
  it('takes spec.upgrade with intent upgrade', () => {
    const result = parse({
      intent: 'upgrade',
      upgrade: { image: IMAGE, stage: true },
    });
    expect(result.success).toBe(true);
    expect(result.data?.spec.upgrade).toEqual({ image: IMAGE, stage: true });
  });

  it('requires spec.upgrade with intent upgrade', () => {
    const result = parse({ intent: 'upgrade' });
    expect(result.success).toBe(false);
    expect(result.error?.message).toMatch(
      /upgrade is required with intent upgrade/,
    );
  });

  it('refuses spec.upgrade on a reboot plan (a step would carry it nowhere)', () => {
    const result = parse({ intent: 'reboot', upgrade: { image: IMAGE } });
    expect(result.success).toBe(false);
    expect(result.error?.message).toMatch(/applies to no other intent/);
  });

  it('takes spec.firmware with intent firmware only', () => {
    const firmware = { imageURI: 'https://fw.example/bios.bin' };
    expect(parse({ intent: 'firmware', firmware }).success).toBe(true);
    expect(parse({ intent: 'firmware' }).success).toBe(false);
    expect(
      parse({ intent: 'upgrade', upgrade: { image: IMAGE }, firmware }).success,
    ).toBe(false);
  });

  it("keeps each node's versions and the summary in status", () => {
    const result = parse(
      { intent: 'upgrade', upgrade: { image: IMAGE } },
      {
        phase: 'Running',
        nodes: [
          {
            name: 'worker-1',
            phase: 'Done',
            talosVersion: { before: 'v1.11.3', after: 'v1.12.0' },
          },
        ],
        upgrade: {
          target: 'v1.12.0',
          atTarget: 1,
          total: 1,
          summary: '1 of 1 at v1.12.0',
        },
      },
    );
    expect(result.success).toBe(true);
    expect(result.data?.status?.nodes?.[0].talosVersion).toEqual({
      before: 'v1.11.3',
      after: 'v1.12.0',
    });
  });

  it('refuses a version past its length limit in a step', () => {
    const result = parse(
      { intent: 'upgrade', upgrade: { image: IMAGE } },
      {
        nodes: [
          {
            name: 'worker-1',
            phase: 'Done',
            talosVersion: { after: `v${'1'.repeat(90)}` },
          },
        ],
      },
    );
    expect(result.success).toBe(false);
  });
});
