/*
 * The firmware picker's Components choice as data: what it offers from the readings and
 * which checked ids a request may carry as targets.
 */
import {
  EMPTY_INSTALL_DRAFT,
  firmwareChoicesOf,
  installTargetOf,
  targetsOf,
} from './installTarget';

const BIOS = '/redfish/v1/UpdateService/FirmwareInventory/BIOS';
const BMC = '/redfish/v1/UpdateService/FirmwareInventory/BMC';
const SOURCES = ['https://fw.plant.example'];

describe('targetsOf', () => {
  it('never sends text the readings do not list as an id (free text, a name, an id dropped since)', () => {
    const choices = firmwareChoicesOf([
      [
        { id: BIOS, name: 'BIOS', version: '2.4.0' },
        { name: 'CPLD', version: '1.2' },
      ],
    ]);
    expect(
      targetsOf(
        ['/redfish/v1/Managers/1/Actions/Manager.Reset', 'CPLD', BMC, BIOS],
        choices,
      ),
    ).toEqual([BIOS]);
  });

  it('reaches the request body only through it', () => {
    const target = installTargetOf(
      'firmware',
      {
        ...EMPTY_INSTALL_DRAFT,
        source: SOURCES[0],
        rest: '/bios.bin',
        targets: ['typed by someone', BIOS],
      },
      SOURCES,
      undefined,
      firmwareChoicesOf([[{ id: BIOS, name: 'BIOS', version: '2.4.0' }]]),
    );
    expect(target.ok && target.body.targets).toEqual([BIOS]);
    const none = installTargetOf(
      'firmware',
      {
        ...EMPTY_INSTALL_DRAFT,
        source: SOURCES[0],
        rest: '/bios.bin',
        targets: [BIOS],
      },
      SOURCES,
    );
    expect(none.ok && none.body).toEqual({
      imageURI: 'https://fw.plant.example/bios.bin',
    });
  });
});

describe('firmwareChoicesOf', () => {
  it('is the union of the servers readings by id, each with the versions read', () => {
    expect(
      firmwareChoicesOf([
        [
          { id: BIOS, name: 'BIOS', version: '2.4.0' },
          { id: BMC, name: 'BMC', version: '7.10' },
        ],
        undefined,
        [
          { id: BIOS, name: 'BIOS', version: '2.5.0' },
          { id: BIOS, name: 'BIOS', version: '2.4.0' },
        ],
      ]),
    ).toEqual([
      { id: BIOS, name: 'BIOS', versions: ['2.4.0', '2.5.0'] },
      { id: BMC, name: 'BMC', versions: ['7.10'] },
    ]);
  });
});
