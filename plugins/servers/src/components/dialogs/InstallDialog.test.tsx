/*
 * The upgrade and firmware dialogs (issue 47): the target from the deployment's allowed
 * list, what the server runs now beside it (and whether it is already there), the
 * pre-flight and the ceremony as for a reboot, and the body they send.
 */
import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { ceremonyFor } from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import { fakeServersApi, serverList } from '../../testing/fixtures';
import { rebootPreflight } from '../../testing/power';
import { ActionDialog } from './ActionDialog';
import { ACKNOWLEDGEMENT } from './ceremonyText';

const SOURCES = {
  talosImages: [
    'factory.talos.dev/installer/',
    'ghcr.io/siderolabs/installer:',
  ],
  firmwareSources: ['https://fw.plant.example', 'https://signed.plant.example'],
  // A source configured with checksumRequired: the backend refuses a request without one.
  firmwareChecksumRequired: ['https://signed.plant.example'],
};

const SHA = `sha256:${'9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'}`;

function upgradePreflight(talos?: string) {
  return rebootPreflight({
    action: 'upgrade',
    ceremony: ceremonyFor('upgrade', 'allow'),
    token: 'tok-upgrade',
    versions: talos ? { talos } : {},
  });
}

function firmwarePreflight(
  firmware = [
    { name: 'BIOS', version: '2.19.1' },
    { name: 'BMC', version: '7.10' },
  ],
) {
  return rebootPreflight({
    action: 'firmware',
    ceremony: ceremonyFor('firmware', 'allow'),
    token: 'tok-firmware',
    versions: { firmware },
  });
}

function renderInstall(
  action: 'upgrade' | 'firmware',
  api: ReturnType<typeof fakeServersApi>,
  talosVersion?: string,
) {
  const onDone = jest.fn();
  renderInTestApp(
    <ActionDialog
      cluster="rack"
      node="worker-1"
      action={action}
      offer={{
        offered: true,
        allowed: true,
        ceremony: ceremonyFor(action, 'allow'),
      }}
      talosVersion={talosVersion}
      onClose={jest.fn()}
      onDone={onDone}
    />,
    { apis: [[serversApiRef, api]] },
  );
  return { onDone };
}

function apiWith(preflight: ReturnType<typeof rebootPreflight>) {
  const api = fakeServersApi(serverList([]));
  api.getUpgradeSources.mockResolvedValue(SOURCES);
  api.preflight.mockResolvedValue(preflight);
  api.requestAction.mockResolvedValue({ name: 'worker-1-upgrade-abc' });
  return api;
}

const dialog = () => screen.getByRole('dialog');
const submit = (name: string) => within(dialog()).getByRole('button', { name });
const typeInto = (testId: string, value: string) =>
  fireEvent.change(screen.getByTestId(testId), { target: { value } });

/** Fills what the reboot's ceremony asks: the acknowledgement, a reason, the name. */
function completeCeremony() {
  fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
  typeInto('action-reason', 'Talos 1.12 (CVE fixes) CHG-12');
  typeInto('action-typed-name', 'worker-1');
}

describe('the upgrade dialog', () => {
  it('offers the allowed image sources, shows the image and the version it replaces, and sends the image', async () => {
    const api = apiWith(upgradePreflight('v1.11.3'));
    const { onDone } = renderInstall('upgrade', api, 'v1.11.3');
    await screen.findByTestId('preflight');
    expect(api.getUpgradeSources).toHaveBeenCalledTimes(1);
    expect(api.preflight).toHaveBeenCalledWith('rack', 'worker-1', 'upgrade', {
      deleteEmptyDirData: false,
      force: false,
    });
    // The allowed list, the first chosen.
    const source = screen.getByRole('combobox', {
      name: /Installer image source/,
    });
    expect(source).toHaveTextContent('factory.talos.dev/installer/');
    fireEvent.mouseDown(source);
    const options = within(screen.getByRole('listbox')).getAllByRole('option');
    expect(options.map(o => o.textContent)).toEqual(SOURCES.talosImages);
    fireEvent.click(options[1]);
    expect(
      screen.getByRole('combobox', { name: /Installer image source/ }),
    ).toHaveTextContent('ghcr.io/siderolabs/installer:');

    expect(screen.getByTestId('install-current')).toHaveTextContent(
      'worker-1 runs Talos v1.11.3 now.',
    );
    typeInto('install-rest', 'v1.12.0');
    expect(screen.getByTestId('install-shown')).toHaveTextContent(
      'Image: ghcr.io/siderolabs/installer:v1.12.0',
    );
    expect(screen.getByTestId('install-current')).toHaveTextContent(
      'worker-1 runs Talos v1.11.3 now. The upgrade installs v1.12.0.',
    );
    // An upgrade's force is Talos's, never a drain option here.
    expect(screen.queryByLabelText(/controller/i)).toBeNull();

    expect(submit('Upgrade Talos')).toBeDisabled();
    completeCeremony();
    expect(submit('Upgrade Talos')).toBeEnabled();
    fireEvent.click(submit('Upgrade Talos'));
    await waitFor(() =>
      expect(onDone).toHaveBeenCalledWith('worker-1-upgrade-abc'),
    );
    const body = api.requestAction.mock.calls[0][3];
    expect(api.requestAction.mock.calls[0].slice(0, 3)).toEqual([
      'rack',
      'worker-1',
      'upgrade',
    ]);
    expect(body).toEqual({
      reason: 'Talos 1.12 (CVE fixes) CHG-12',
      typedName: 'worker-1',
      image: 'ghcr.io/siderolabs/installer:v1.12.0',
      preflightToken: 'tok-upgrade',
      deleteEmptyDirData: false,
    });
    expect(body).not.toHaveProperty('force');
  });

  it('says the node is already at the target and does not send', async () => {
    const api = apiWith(upgradePreflight('v1.12.0'));
    renderInstall('upgrade', api, 'v1.12.0');
    await screen.findByTestId('preflight');
    typeInto('install-rest', 'abc123:v1.12.0');
    expect(screen.getByTestId('install-already')).toHaveTextContent(
      'worker-1 is already at v1.12.0: there is nothing to upgrade.',
    );
    completeCeremony();
    expect(submit('Upgrade Talos')).toBeDisabled();
    expect(api.requestAction).not.toHaveBeenCalled();
  });

  it("uses the row's version until the pre-flight names one", async () => {
    const api = apiWith(upgradePreflight());
    renderInstall('upgrade', api, 'v1.11.3');
    await screen.findByTestId('preflight');
    expect(screen.getByTestId('install-current')).toHaveTextContent(
      'worker-1 runs Talos v1.11.3 now.',
    );
  });

  it('refuses what the shared rule refuses, in its words, and sends nothing', async () => {
    const api = apiWith(upgradePreflight('v1.11.3'));
    renderInstall('upgrade', api);
    await screen.findByTestId('preflight');
    // A tag that names no version.
    typeInto('install-rest', 'abc:latest');
    const field = screen.getByTestId('install-rest');
    expect(field).toHaveAttribute('aria-invalid', 'true');
    expect(
      screen.getByText(
        'image factory.talos.dev/installer/abc:latest names no Talos version: its tag must be one (e.g. v1.12.0)',
      ),
    ).toBeInTheDocument();
    // Something that is not an image reference at all.
    typeInto('install-rest', '../evil:v1.12.0');
    expect(screen.getByText(/is not in the allowed list/)).toBeInTheDocument();
    completeCeremony();
    expect(submit('Upgrade Talos')).toBeDisabled();
    expect(screen.queryByTestId('install-shown')).toBeNull();
  });

  it('names the empty setting when nothing is allowed, and cannot be sent', async () => {
    const api = apiWith(upgradePreflight('v1.11.3'));
    api.getUpgradeSources.mockResolvedValue({
      talosImages: [],
      firmwareSources: [],
      firmwareChecksumRequired: [],
    });
    renderInstall('upgrade', api);
    expect(await screen.findByTestId('install-no-sources')).toHaveTextContent(
      'This deployment allows no Talos installer image (servers.upgrades.talosImages is empty): ask an administrator to allow one.',
    );
    await screen.findByTestId('preflight');
    completeCeremony();
    expect(submit('Upgrade Talos')).toBeDisabled();
  });

  it('says when the allowed sources cannot be read', async () => {
    const api = apiWith(upgradePreflight('v1.11.3'));
    api.getUpgradeSources.mockRejectedValue(new Error('backend unreachable'));
    renderInstall('upgrade', api);
    expect(
      await screen.findByTestId('install-sources-error'),
    ).toHaveTextContent(
      'Could not read the allowed sources: backend unreachable',
    );
  });

  it('is complete with the keyboard: the source list opens and chooses with keys', async () => {
    const api = apiWith(upgradePreflight('v1.11.3'));
    renderInstall('upgrade', api);
    await screen.findByTestId('preflight');
    const source = screen.getByRole('combobox', {
      name: /Installer image source/,
    });
    source.focus();
    fireEvent.keyDown(source, { key: 'ArrowDown' });
    const listbox = await screen.findByRole('listbox');
    const second = within(listbox).getAllByRole('option')[1];
    fireEvent.keyDown(listbox, { key: 'ArrowDown' });
    fireEvent.keyDown(second, { key: 'Enter' });
    await waitFor(() =>
      expect(
        screen.getByRole('combobox', { name: /Installer image source/ }),
      ).toHaveTextContent('ghcr.io/siderolabs/installer:'),
    );
    // Every field has a name a screen reader reads.
    expect(screen.getByLabelText(/^Version/)).toBe(
      screen.getByTestId('install-rest'),
    );
  });
});

describe('the firmware dialog', () => {
  it('shows the firmware now, offers the allowed origins and sends the image URI and apply time', async () => {
    const api = apiWith(firmwarePreflight());
    api.requestAction.mockResolvedValue({ name: 'worker-1-firmware-abc' });
    const { onDone } = renderInstall('firmware', api);
    await screen.findByTestId('preflight');
    // The reading's components, each with its version now, in the Components choice.
    const now = screen.getByRole('group', { name: 'Components' });
    expect(within(now).getByText(/2\.19\.1/)).toBeInTheDocument();
    expect(within(now).getByText(/7\.10/)).toBeInTheDocument();
    expect(
      screen.getByRole('combobox', { name: /Firmware source/ }),
    ).toHaveTextContent('https://fw.plant.example');
    typeInto('install-rest', 'bios/2.20.0.bin');
    expect(screen.getByTestId('install-shown')).toHaveTextContent(
      'Image URI: https://fw.plant.example/bios/2.20.0.bin',
    );
    fireEvent.mouseDown(screen.getByRole('combobox', { name: /^Apply/ }));
    fireEvent.click(screen.getByRole('option', { name: 'OnReset' }));
    completeCeremony();
    fireEvent.click(submit('Update firmware'));
    await waitFor(() =>
      expect(onDone).toHaveBeenCalledWith('worker-1-firmware-abc'),
    );
    expect(api.requestAction.mock.calls[0][3]).toEqual({
      reason: 'Talos 1.12 (CVE fixes) CHG-12',
      typedName: 'worker-1',
      imageURI: 'https://fw.plant.example/bios/2.20.0.bin',
      applyTime: 'OnReset',
      preflightToken: 'tok-firmware',
      deleteEmptyDirData: false,
      force: false,
    });
  });

  it("refuses an image URI the shared rule refuses (a backslash a BMC's parser could read as another host)", async () => {
    const api = apiWith(firmwarePreflight());
    renderInstall('firmware', api);
    await screen.findByTestId('preflight');
    typeInto('install-rest', '\\\\evil.example\\bios.bin');
    expect(screen.getByTestId('install-rest')).toHaveAttribute(
      'aria-invalid',
      'true',
    );
    expect(screen.getByText(/a backslash/)).toBeInTheDocument();
    expect(screen.queryByTestId('install-shown')).toBeNull();
    completeCeremony();
    expect(submit('Update firmware')).toBeDisabled();
  });

  it("refuses a checksum servers-common's rule refuses (uppercase, short, md5), in its words, and sends nothing", async () => {
    const api = apiWith(firmwarePreflight());
    renderInstall('firmware', api);
    await screen.findByTestId('preflight');
    typeInto('install-rest', 'bios/2.20.0.bin');
    completeCeremony();
    expect(submit('Update firmware')).toBeEnabled();
    const refused = [
      SHA.toUpperCase(),
      `sha256:${'ab'.repeat(31)}`,
      'md5:9e107d9d372bb6826bd81d3542a419d6',
    ];
    for (const checksum of refused) {
      typeInto('install-checksum', checksum);
      expect(screen.getByTestId('install-checksum')).toHaveAttribute(
        'aria-invalid',
        'true',
      );
      expect(
        screen.getByText(
          `the firmware checksum ${JSON.stringify(
            checksum,
          )} is not sha256:<64 lowercase hex digits>`,
        ),
      ).toBeInTheDocument();
      expect(submit('Update firmware')).toBeDisabled();
    }
    typeInto('install-checksum', SHA);
    expect(screen.getByTestId('install-checksum')).toHaveAttribute(
      'aria-invalid',
      'false',
    );
    expect(submit('Update firmware')).toBeEnabled();
    expect(api.requestAction).not.toHaveBeenCalled();
  });

  it('asks for a checksum where the source requires one: submit waits for a valid one, then version and checksum are sent', async () => {
    const api = apiWith(firmwarePreflight());
    api.requestAction.mockResolvedValue({ name: 'worker-1-firmware-abc' });
    const { onDone } = renderInstall('firmware', api);
    await screen.findByTestId('preflight');
    // The open source: the checksum is optional.
    expect(screen.getByTestId('install-checksum')).not.toBeRequired();
    fireEvent.mouseDown(
      screen.getByRole('combobox', { name: /Firmware source/ }),
    );
    fireEvent.click(
      screen.getByRole('option', { name: 'https://signed.plant.example' }),
    );
    const checksum = screen.getByTestId('install-checksum');
    expect(checksum).toBeRequired();
    expect(screen.getByLabelText(/^Checksum/)).toBe(checksum);
    expect(
      screen.getByText(
        /^Required: https:\/\/signed\.plant\.example accepts only/,
      ),
    ).toBeInTheDocument();
    typeInto('install-rest', 'bios/2.20.0.bin');
    typeInto('install-version', ' 2.20.0 ');
    completeCeremony();
    // Nothing typed yet: not in error, but it cannot be sent.
    expect(checksum).toHaveAttribute('aria-invalid', 'false');
    expect(submit('Update firmware')).toBeDisabled();
    typeInto('install-checksum', SHA.slice(0, -1));
    expect(submit('Update firmware')).toBeDisabled();
    typeInto('install-checksum', SHA);
    expect(submit('Update firmware')).toBeEnabled();
    fireEvent.click(submit('Update firmware'));
    await waitFor(() =>
      expect(onDone).toHaveBeenCalledWith('worker-1-firmware-abc'),
    );
    expect(api.requestAction.mock.calls[0][3]).toEqual({
      reason: 'Talos 1.12 (CVE fixes) CHG-12',
      typedName: 'worker-1',
      imageURI: 'https://signed.plant.example/bios/2.20.0.bin',
      version: '2.20.0',
      checksum: SHA,
      preflightToken: 'tok-firmware',
      deleteEmptyDirData: false,
      force: false,
    });
  });

  it("says the node is already at the target version when every component of the BMC's reading reports it, and does not send", async () => {
    const api = apiWith(
      firmwarePreflight([
        { name: 'BIOS', version: '2.5.0' },
        { name: 'BMC', version: '2.5.0' },
      ]),
    );
    renderInstall('firmware', api);
    await screen.findByTestId('preflight');
    typeInto('install-rest', 'bundle/2.5.0.bin');
    typeInto('install-version', '2.6.0');
    completeCeremony();
    expect(screen.queryByTestId('install-already')).toBeNull();
    expect(submit('Update firmware')).toBeEnabled();
    typeInto('install-version', '2.5.0');
    expect(screen.getByTestId('install-already')).toHaveTextContent(
      'worker-1 is already at 2.5.0',
    );
    expect(submit('Update firmware')).toBeDisabled();
    expect(api.requestAction).not.toHaveBeenCalled();
  });

  it('a firmware version the inventory lists for only one component is not "already there" (the request targets every component)', async () => {
    const api = apiWith(
      firmwarePreflight([
        { name: 'BIOS', version: '2.5.0' },
        { name: 'BMC', version: '7.10' },
      ]),
    );
    renderInstall('firmware', api);
    await screen.findByTestId('preflight');
    typeInto('install-rest', 'bios/2.5.0.bin');
    typeInto('install-version', '2.5.0');
    completeCeremony();
    expect(screen.queryByTestId('install-already')).toBeNull();
    expect(submit('Update firmware')).toBeEnabled();
  });

  describe('the Components choice', () => {
    const BIOS = '/redfish/v1/UpdateService/FirmwareInventory/BIOS';
    const BMC = '/redfish/v1/UpdateService/FirmwareInventory/BMC';
    // A hostile BMC: an id that is not a link at all, with markup and a comma in it.
    const HOSTILE = '<img src=x onerror=alert(1)>,/redfish/v1/Systems/1';

    async function openWith(
      firmware: Array<{ id?: string; name: string; version: string }>,
    ) {
      const api = apiWith(firmwarePreflight(firmware as any));
      api.requestAction.mockResolvedValue({ name: 'worker-1-firmware-abc' });
      const { onDone } = renderInstall('firmware', api);
      await screen.findByTestId('preflight');
      typeInto('install-rest', 'bios/2.5.0.bin');
      return { api, onDone };
    }
    const group = () => screen.getByRole('group', { name: 'Components' });
    const box = (name: RegExp) =>
      within(group()).getByRole('checkbox', { name });

    it('sends a hostile id back exactly as the reading gave it, as text, and only because the reading listed it', async () => {
      const { api, onDone } = await openWith([
        { id: HOSTILE, name: 'Evil', version: '1.0' },
        { id: BMC, name: 'BMC', version: '7.10' },
      ]);
      // Shown as text, never as markup.
      expect(group().querySelector('img')).toBeNull();
      fireEvent.click(box(/^Evil/));
      completeCeremony();
      fireEvent.click(submit('Update firmware'));
      await waitFor(() => expect(onDone).toHaveBeenCalled());
      expect(api.requestAction.mock.calls[0][3].targets).toEqual([HOSTILE]);
    });

    it('a component the reading gave no id cannot be checked (it could not be named)', async () => {
      await openWith([
        { name: 'CPLD', version: '1.2' },
        { id: BMC, name: 'BMC', version: '7.10' },
      ]);
      expect(box(/^CPLD/)).toBeDisabled();
      expect(box(/^BMC/)).toBeEnabled();
    });

    it('checking BIOS only with version 2.5.0, where BIOS is at 2.5.0 and the BMC is not: already at, nothing sent; unchecked, the BMC picks and it can be sent', async () => {
      const { api } = await openWith([
        { id: BIOS, name: 'BIOS', version: '2.5.0' },
        { id: BMC, name: 'BMC', version: '7.10' },
      ]);
      typeInto('install-version', '2.5.0');
      completeCeremony();
      expect(screen.getByTestId('install-components')).toHaveTextContent(
        'None checked: the BMC picks (any component that changes counts)',
      );
      expect(screen.queryByTestId('install-already')).toBeNull();
      expect(submit('Update firmware')).toBeEnabled();
      fireEvent.click(box(/^BIOS \(now 2\.5\.0\)/));
      expect(screen.getByTestId('install-already')).toHaveTextContent(
        'worker-1 is already at 2.5.0: every component checked reports it',
      );
      expect(submit('Update firmware')).toBeDisabled();
      // The BMC checked too: it is at 7.10, so there is something to do.
      fireEvent.click(box(/^BMC/));
      expect(screen.queryByTestId('install-already')).toBeNull();
      expect(submit('Update firmware')).toBeEnabled();
      expect(api.requestAction).not.toHaveBeenCalled();
    });

    it('sends the checked ids as targets, in the order checked, with the rest of the body', async () => {
      const { api, onDone } = await openWith([
        { id: BIOS, name: 'BIOS', version: '2.4.0' },
        { id: BMC, name: 'BMC', version: '7.10' },
      ]);
      fireEvent.click(box(/^BMC/));
      fireEvent.click(box(/^BIOS/));
      typeInto('install-version', '2.5.0');
      completeCeremony();
      fireEvent.click(submit('Update firmware'));
      await waitFor(() => expect(onDone).toHaveBeenCalled());
      expect(api.requestAction.mock.calls[0][3]).toEqual({
        reason: 'Talos 1.12 (CVE fixes) CHG-12',
        typedName: 'worker-1',
        imageURI: 'https://fw.plant.example/bios/2.5.0.bin',
        version: '2.5.0',
        targets: [BMC, BIOS],
        preflightToken: 'tok-firmware',
        deleteEmptyDirData: false,
        force: false,
      });
    });
  });
});
