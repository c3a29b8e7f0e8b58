import {
  MAX_FIRMWARE_HISTORY,
  type FirmwareHistoryEntry,
  type NodeMaintenance,
} from '@rackside/plugin-servers-common';
import {
  appendFirmwareHistory,
  firmwareHistoryEntry,
  recordFirmwareHistory,
} from './firmwareHistory';

const BIOS = '/redfish/v1/UpdateService/FirmwareInventory/BIOS';
const BMC = '/redfish/v1/UpdateService/FirmwareInventory/BMC';

function ended(
  phase: 'Complete' | 'Failed' | 'Refused' | 'Drained',
  over: Partial<NodeMaintenance['status']> = {},
  targets?: string[],
): NodeMaintenance {
  return {
    apiVersion: 'rackside.dev/v1alpha1',
    kind: 'NodeMaintenance',
    metadata: { name: 'fw-1', uid: 'u-1' },
    spec: {
      nodeName: 'worker-1',
      intent: 'firmware',
      reason: 'r',
      requestedBy: 'x',
      firmware: { imageURI: 'https://fw.example.com/b.bin', targets },
    },
    status: {
      phase,
      history: [{ phase, at: '2026-12-07T10:00:00Z', message: 'm' }],
      power: {
        firmware: { recordedAt: '2026-12-07T09:00:00Z', channel: 'redfish' },
      },
      firmware: {
        before: [
          { id: BIOS, name: 'BIOS', version: '2.4.1' },
          { id: BMC, name: 'BMC', version: '1.0' },
        ],
        after: [
          { id: BIOS, name: 'BIOS', version: '2.5.0' },
          { id: BMC, name: 'BMC', version: '1.0' },
        ],
      },
      ...over,
    },
  } as NodeMaintenance;
}

const entry = (maintenance: string, uid?: string): FirmwareHistoryEntry => ({
  at: '2026-12-07T10:00:00Z',
  maintenance,
  ...(uid ? { uid } : {}),
  imageURI: 'https://fw.example.com/b.bin',
  result: 'Complete',
  components: [],
});

describe('firmwareHistoryEntry', () => {
  it('keeps the changed components without targets, and when it ended', () => {
    expect(firmwareHistoryEntry(ended('Complete'))).toEqual({
      at: '2026-12-07T10:00:00Z',
      maintenance: 'fw-1',
      uid: 'u-1',
      imageURI: 'https://fw.example.com/b.bin',
      result: 'Complete',
      components: [{ id: BIOS, before: '2.4.1', after: '2.5.0' }],
    });
  });

  it('keeps the targeted components, changed or not', () => {
    expect(
      firmwareHistoryEntry(ended('Failed', {}, ['BMC']))?.components,
    ).toEqual([{ id: BMC, before: '1.0', after: '1.0' }]);
  });

  it('has none for a maintenance that sent nothing or has not ended', () => {
    expect(
      firmwareHistoryEntry(ended('Failed', { power: {} })),
    ).toBeUndefined();
    expect(firmwareHistoryEntry(ended('Refused'))).toBeUndefined();
    expect(firmwareHistoryEntry(ended('Drained'))).toBeUndefined();
  });
});

describe('appendFirmwareHistory', () => {
  it('writes an entry once per uid (a restart finds it there)', () => {
    const once = appendFirmwareHistory([], entry('a', 'u-a'))!;
    expect(once).toHaveLength(1);
    expect(appendFirmwareHistory(once, entry('a', 'u-a'))).toBeUndefined();
    // The same name made again (another uid) is another update.
    expect(appendFirmwareHistory(once, entry('a', 'u-b'))).toHaveLength(2);
  });

  it('keeps the last 20, dropping the oldest', () => {
    let history: FirmwareHistoryEntry[] = [];
    for (let i = 0; i < MAX_FIRMWARE_HISTORY + 3; i++) {
      history = appendFirmwareHistory(history, entry(`m-${i}`, `u-${i}`))!;
    }
    expect(history).toHaveLength(MAX_FIRMWARE_HISTORY);
    expect(history[0].maintenance).toBe('m-3');
    expect(history.at(-1)?.maintenance).toBe(`m-${MAX_FIRMWARE_HISTORY + 2}`);
  });
});

describe('recordFirmwareHistory', () => {
  it('writes nothing for a node without a ServerBMC', async () => {
    const write = jest.fn();
    expect(
      await recordFirmwareHistory(ended('Complete'), {
        read: () => undefined,
        write,
      }),
    ).toBe(false);
    expect(write).not.toHaveBeenCalled();
  });
});
