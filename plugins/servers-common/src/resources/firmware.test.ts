import { examples } from './fixtures';
import { nodeMaintenanceSchema } from './nodeMaintenance';

const IMAGE = 'https://fw.example.com/bios-2.5.0.bin';

function parse(spec: Record<string, unknown>, status?: unknown) {
  const input = examples.nodeMaintenance();
  return nodeMaintenanceSchema.safeParse({
    ...input,
    spec: { ...input.spec, ...spec },
    ...(status ? { status } : {}),
  });
}

describe('spec.firmware of a NodeMaintenance', () => {
  it('is taken with intent firmware', () => {
    const firmware = {
      imageURI: IMAGE,
      targets: ['/redfish/v1/UpdateService/FirmwareInventory/BIOS'],
      applyTime: 'OnReset',
    };
    const result = parse({ intent: 'firmware', firmware });
    expect(result.success).toBe(true);
    expect(result.data?.spec.firmware).toEqual(firmware);
  });

  it('is required with intent firmware', () => {
    const result = parse({ intent: 'firmware' });
    expect(result.success).toBe(false);
    expect(result.error?.message).toMatch(
      /firmware is required with intent firmware/,
    );
  });

  it('applies to no other intent', () => {
    const result = parse({ intent: 'reboot', firmware: { imageURI: IMAGE } });
    expect(result.success).toBe(false);
    expect(result.error?.message).toMatch(/applies to no other intent/);
  });

  it('refuses an apply time Redfish does not name, and too many targets', () => {
    expect(
      parse({
        intent: 'firmware',
        firmware: { imageURI: IMAGE, applyTime: 'AtMaintenanceWindowStart' },
      }).success,
    ).toBe(false);
    expect(
      parse({
        intent: 'firmware',
        firmware: {
          imageURI: IMAGE,
          targets: Array.from({ length: 17 }, (_, i) => `/t/${i}`),
        },
      }).success,
    ).toBe(false);
  });

  it('keeps the inventory before and after and the task in status', () => {
    const result = parse(
      { intent: 'firmware', firmware: { imageURI: IMAGE } },
      {
        phase: 'Returning',
        firmware: {
          before: [{ id: 'BIOS', name: 'Rack BIOS', version: '2.4.1' }],
          after: [{ id: 'BIOS', name: 'Rack BIOS', version: '2.5.0' }],
          taskUri: '/redfish/v1/TaskService/TaskMonitors/1',
          taskState: 'Completed',
          percent: 100,
          messages: ['The task completed.'],
        },
        power: {
          firmware: {
            recordedAt: '2026-08-04T10:06:00Z',
            sentAt: '2026-08-04T10:06:01Z',
            channel: 'redfish',
          },
        },
      },
    );
    expect(result.success).toBe(true);
  });

  it('takes a version and a sha256 checksum, and no credentials', () => {
    const checksum = `sha256:${'0a'.repeat(32)}`;
    const result = parse({
      intent: 'firmware',
      firmware: { imageURI: IMAGE, version: '2.5.0', checksum },
    });
    expect(result.success).toBe(true);
    expect(result.data?.spec.firmware).toEqual({
      imageURI: IMAGE,
      version: '2.5.0',
      checksum,
    });
    // A request cannot name credentials or a Secret: the schema strips what it
    // does not know, and the CRD (structural) prunes it at the apiserver.
    const named = parse({
      intent: 'firmware',
      firmware: {
        imageURI: IMAGE,
        credentialsSecret: 'other-ns/secret',
        username: 'u',
        password: 'p',
      },
    });
    expect(named.data?.spec.firmware).toEqual({ imageURI: IMAGE });
  });

  it.each([
    `sha256:${'0A'.repeat(32)}`,
    `sha256:${'0a'.repeat(31)}`,
    `md5:${'0a'.repeat(16)}`,
    '',
  ])('refuses the checksum %j', checksum => {
    const result = parse({
      intent: 'firmware',
      firmware: { imageURI: IMAGE, checksum },
    });
    expect(result.success).toBe(false);
  });
});
