import { biosAndBmcOf, firmwareChanges } from './versionsText';

describe('biosAndBmcOf', () => {
  it('finds the BIOS and the BMC by name or id, whatever the vendor calls them', () => {
    expect(
      biosAndBmcOf([
        { name: 'NIC 1', version: '22.1' },
        { name: 'BIOS', version: '2.19.1' },
        { name: 'BMC', version: '7.10' },
      ]),
    ).toEqual({ bios: '2.19.1', bmc: '7.10' });
    expect(
      biosAndBmcOf([
        {
          name: 'Integrated Dell Remote Access Controller',
          id: 'iDRAC',
          version: '7.00.00',
        },
        { name: 'System ROM', version: 'U46 v2.90' },
      ]),
    ).toEqual({ bios: 'U46 v2.90', bmc: '7.00.00' });
  });

  it('says nothing of a component it cannot tell, nor of an empty inventory', () => {
    expect(biosAndBmcOf([{ name: 'Disk 0', version: 'GXA7' }])).toEqual({});
    expect(biosAndBmcOf([])).toEqual({});
    // "biosphere" is no BIOS: the name is matched as a word.
    expect(biosAndBmcOf([{ name: 'biosphere', version: '1' }])).toEqual({});
  });
});

describe('firmwareChanges', () => {
  it('pairs each component before with after by id, and says which changed', () => {
    expect(
      firmwareChanges(
        [
          { id: 'BIOS', name: 'BIOS', version: '2.19.1' },
          { id: 'BMC', name: 'BMC', version: '7.10' },
        ],
        [
          { id: 'BMC', name: 'BMC', version: '7.10' },
          { id: 'BIOS', name: 'BIOS', version: '2.20.0' },
        ],
      ),
    ).toEqual([
      { name: 'BIOS', before: '2.19.1', after: '2.20.0', changed: true },
      { name: 'BMC', before: '7.10', after: '7.10', changed: false },
    ]);
  });

  it('before only (the update is not applied yet): nothing changed', () => {
    expect(
      firmwareChanges(
        [{ id: 'BIOS', name: 'BIOS', version: '2.19.1' }],
        undefined,
      ),
    ).toEqual([{ name: 'BIOS', before: '2.19.1', changed: false }]);
  });

  it('a component listed only after is shown as new', () => {
    expect(
      firmwareChanges([], [{ id: 'CPLD', name: 'CPLD', version: '1.0.4' }]),
    ).toEqual([{ name: 'CPLD', after: '1.0.4', changed: true }]);
  });
});
