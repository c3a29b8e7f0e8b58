/*
 * The plan dialog's upgrade and firmware intents (issue 47): offered where the user holds
 * servers:upgrade / servers:firmware, the target from the single dialog's picker, the plan
 * pre-flight with the servers already at the target, the typed count of those it acts
 * on, and the body it sends.
 */
import '@testing-library/jest-dom';
import { mockApis, renderInTestApp } from '@backstage/frontend-test-utils';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { serversApiRef } from '../../api';
import { fakeServersApi, serverList } from '../../testing/fixtures';
import { planPreflight } from '../../__testUtils__/plans';
import { ServersLinksProvider } from '../ui/links';
import { ACKNOWLEDGEMENT } from './ceremonyText';
import { PlanDialog } from './PlanDialog';

const NODES = ['worker-1', 'worker-2', 'worker-3'];
const PREFIX = 'factory.talos.dev/installer/';
const IMAGE = `${PREFIX}abc123:v1.12.0`;
const SOURCES = {
  talosImages: [PREFIX],
  firmwareSources: ['https://fw.plant.example', 'https://signed.plant.example'],
  firmwareChecksumRequired: ['https://signed.plant.example'],
};
const SHA = `sha256:${'9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08'}`;

function render(api: ReturnType<typeof fakeServersApi>, denied: string[] = []) {
  const onClose = jest.fn();
  renderInTestApp(
    <ServersLinksProvider
      links={{
        servers: () => '/servers',
        plan: (c: string, n: string) => `/servers/plans/${c}/${n}`,
      }}
    >
      <PlanDialog cluster="rack" nodes={NODES} onClose={onClose} />
    </ServersLinksProvider>,
    {
      apis: [
        [serversApiRef, api],
        [
          permissionApiRef,
          mockApis.permission({
            authorize: request =>
              denied.includes(request.permission.name)
                ? AuthorizeResult.DENY
                : AuthorizeResult.ALLOW,
          }),
        ],
      ] as any,
    },
  );
  return onClose;
}

function apiWithSources() {
  const api = fakeServersApi(serverList([]));
  api.getUpgradeSources.mockResolvedValue(SOURCES);
  return api;
}

const typeInto = (testId: string, value: string) =>
  fireEvent.change(screen.getByTestId(testId), { target: { value } });

/** The pre-flight of an upgrade plan where worker-2 already runs the target. */
function upgradePreflight() {
  const acting = ['worker-1', 'worker-3'];
  return planPreflight(acting, {
    intent: 'upgrade',
    image: IMAGE,
    skipped: [{ node: 'worker-2', reason: 'already at v1.12.0' }],
    typedCount: 2,
    token: 'plan-token-upgrade',
  });
}

describe('PlanDialog: upgrade and firmware', () => {
  it('offers Upgrade Talos and Update firmware only where the user holds the permission', async () => {
    const api = apiWithSources();
    api.planPreflight.mockResolvedValue(planPreflight(NODES));
    render(api, ['servers:firmware']);
    expect(await screen.findByLabelText('Upgrade Talos')).toBeInTheDocument();
    expect(screen.getByLabelText('Drain')).toBeInTheDocument();
    expect(screen.getByLabelText('Reboot')).toBeInTheDocument();
    expect(screen.queryByLabelText('Update firmware')).toBeNull();
  });

  it('offers neither to a user without servers:upgrade and servers:firmware', async () => {
    const api = apiWithSources();
    api.planPreflight.mockResolvedValue(planPreflight(NODES));
    render(api, ['servers:upgrade', 'servers:firmware']);
    await screen.findByTestId('plan-preflight');
    expect(screen.getByLabelText('Reboot')).toBeInTheDocument();
    expect(screen.queryByLabelText('Upgrade Talos')).toBeNull();
    expect(screen.queryByLabelText('Update firmware')).toBeNull();
  });

  it('upgrade: picks the target, shows the servers already there, counts the others, sends the image', async () => {
    const api = apiWithSources();
    api.planPreflight.mockImplementation(async (_cluster, query) =>
      query.intent === 'upgrade' ? upgradePreflight() : planPreflight(NODES),
    );
    api.createPlan.mockResolvedValue({ name: 'upgrade-plan-abc' });
    render(api);
    fireEvent.click(await screen.findByLabelText('Upgrade Talos'));
    // No target yet: no pre-flight is asked without an image.
    expect(
      await screen.findByRole('combobox', { name: /Installer image source/ }),
    ).toHaveTextContent(PREFIX);
    expect(api.planPreflight).not.toHaveBeenCalledWith(
      'rack',
      expect.objectContaining({ intent: 'upgrade' }),
    );
    typeInto('install-rest', '../evil:v1.12.0');
    expect(screen.getByTestId('install-rest')).toHaveAttribute(
      'aria-invalid',
      'true',
    );
    typeInto('install-rest', 'abc123:v1.12.0');
    expect(screen.getByTestId('install-shown')).toHaveTextContent(
      `Image: ${IMAGE}`,
    );
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenLastCalledWith('rack', {
        intent: 'upgrade',
        nodes: NODES,
        maxParallel: 1,
        image: IMAGE,
      }),
    );
    const skipped = await screen.findByTestId('plan-skipped');
    expect(skipped).toHaveTextContent('Already there: 1 skipped');
    expect(skipped).toHaveTextContent('worker-2: already at v1.12.0');
    expect(screen.getByTestId('plan-estimate-total')).toHaveTextContent(
      '2 servers in',
    );

    const submit = screen.getByTestId('plan-submit');
    expect(submit).toHaveTextContent('Start rolling upgrade');
    fireEvent.change(screen.getByLabelText(/^Reason/), {
      target: { value: 'Talos 1.12 (CVE fixes) CHG-12' },
    });
    fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
    const count = screen.getByLabelText(
      /Type the number of servers to upgrade \(2\)/,
    );
    fireEvent.change(count, { target: { value: '3' } });
    expect(submit).toBeDisabled();
    fireEvent.change(count, { target: { value: '2' } });
    expect(submit).toBeEnabled();
    fireEvent.click(submit);
    expect(
      await screen.findByRole('link', { name: 'upgrade-plan-abc' }),
    ).toHaveAttribute('href', '/servers/plans/rack/upgrade-plan-abc');
    expect(api.createPlan).toHaveBeenCalledWith('rack', {
      intent: 'upgrade',
      nodes: NODES,
      maxParallel: 1,
      upgrade: { image: IMAGE },
      reason: 'Talos 1.12 (CVE fixes) CHG-12',
      preflightToken: 'plan-token-upgrade',
      typedCount: 2,
    });
  });

  it('firmware: picks the image and when it applies, and sends them', async () => {
    const api = apiWithSources();
    const uri = 'https://fw.plant.example/bios/2.20.0.bin';
    api.planPreflight.mockImplementation(async (_cluster, query) =>
      query.intent === 'firmware'
        ? planPreflight(NODES, {
            intent: 'firmware',
            imageURI: uri,
            typedCount: 3,
            token: 'plan-token-firmware',
          })
        : planPreflight(NODES),
    );
    api.createPlan.mockResolvedValue({ name: 'firmware-plan-abc' });
    render(api);
    fireEvent.click(await screen.findByLabelText('Update firmware'));
    typeInto('install-rest', 'bios/2.20.0.bin');
    fireEvent.mouseDown(
      await screen.findByRole('combobox', { name: /^Apply/ }),
    );
    fireEvent.click(
      within(screen.getByRole('listbox')).getByRole('option', {
        name: 'OnReset',
      }),
    );
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenLastCalledWith('rack', {
        intent: 'firmware',
        nodes: NODES,
        maxParallel: 1,
        imageURI: uri,
      }),
    );
    await screen.findByTestId('plan-preflight');
    fireEvent.change(screen.getByLabelText(/^Reason/), {
      target: { value: 'BIOS 2.20 (memory training fix)' },
    });
    fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
    fireEvent.change(
      screen.getByLabelText(/Type the number of servers to update \(3\)/),
      { target: { value: '3' } },
    );
    const submit = screen.getByTestId('plan-submit');
    expect(submit).toHaveTextContent('Start rolling firmware update');
    fireEvent.click(submit);
    await screen.findByRole('link', { name: 'firmware-plan-abc' });
    expect(api.createPlan).toHaveBeenCalledWith('rack', {
      intent: 'firmware',
      nodes: NODES,
      maxParallel: 1,
      firmware: { imageURI: uri, applyTime: 'OnReset' },
      reason: 'BIOS 2.20 (memory training fix)',
      preflightToken: 'plan-token-firmware',
      typedCount: 3,
    });
  });

  it('firmware with a target version and a checksum: the pre-flight takes both, lists the servers already there, and the plan carries them', async () => {
    const api = apiWithSources();
    const uri = 'https://signed.plant.example/bios/2.5.0.bin';
    api.planPreflight.mockImplementation(async (_cluster, query) =>
      query.intent === 'firmware' && query.version === '2.5.0'
        ? planPreflight(['worker-1', 'worker-3'], {
            intent: 'firmware',
            imageURI: uri,
            skipped: [{ node: 'worker-2', reason: 'already at 2.5.0' }],
            typedCount: 2,
            token: 'plan-token-firmware',
          })
        : planPreflight(NODES),
    );
    api.createPlan.mockResolvedValue({ name: 'firmware-plan-abc' });
    render(api);
    fireEvent.click(await screen.findByLabelText('Update firmware'));
    fireEvent.mouseDown(
      await screen.findByRole('combobox', { name: /Firmware source/ }),
    );
    fireEvent.click(
      within(screen.getByRole('listbox')).getByRole('option', {
        name: 'https://signed.plant.example',
      }),
    );
    typeInto('install-rest', 'bios/2.5.0.bin');
    typeInto('install-version', '2.5.0');
    // The source requires a checksum: no pre-flight (and no plan) without a valid one.
    expect(screen.getByTestId('install-checksum')).toBeRequired();
    typeInto('install-checksum', SHA.toUpperCase());
    expect(
      screen.getByText(/is not sha256:<64 lowercase hex digits>/),
    ).toBeInTheDocument();
    expect(api.planPreflight).not.toHaveBeenCalledWith(
      'rack',
      expect.objectContaining({ intent: 'firmware' }),
    );
    expect(screen.getByTestId('plan-submit')).toBeDisabled();
    typeInto('install-checksum', SHA);
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenLastCalledWith('rack', {
        intent: 'firmware',
        nodes: NODES,
        maxParallel: 1,
        imageURI: uri,
        version: '2.5.0',
        checksum: SHA,
      }),
    );
    const skipped = await screen.findByTestId('plan-skipped');
    expect(skipped).toHaveTextContent('Already there: 1 skipped');
    expect(skipped).toHaveTextContent('worker-2: already at 2.5.0');
    fireEvent.change(screen.getByLabelText(/^Reason/), {
      target: { value: 'BIOS 2.5 (memory training fix)' },
    });
    fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
    fireEvent.change(
      screen.getByLabelText(/Type the number of servers to update \(2\)/),
      { target: { value: '2' } },
    );
    const submit = screen.getByTestId('plan-submit');
    expect(submit).toBeEnabled();
    fireEvent.click(submit);
    await screen.findByRole('link', { name: 'firmware-plan-abc' });
    expect(api.createPlan).toHaveBeenCalledWith('rack', {
      intent: 'firmware',
      nodes: NODES,
      maxParallel: 1,
      firmware: { imageURI: uri, version: '2.5.0', checksum: SHA },
      reason: 'BIOS 2.5 (memory training fix)',
      preflightToken: 'plan-token-firmware',
      typedCount: 2,
    });
  });

  it("firmware: the Components choice is the union of the servers' readings (the skipped ones too); the checked ids go to the pre-flight and the plan as targets", async () => {
    const BIOS = '/redfish/v1/UpdateService/FirmwareInventory/BIOS';
    const BMC = '/redfish/v1/UpdateService/FirmwareInventory/BMC';
    const uri = 'https://fw.plant.example/bios/2.5.0.bin';
    const reading = (bios: string) => [
      { id: BIOS, name: 'BIOS', version: bios },
      { id: BMC, name: 'BMC', version: '7.10' },
    ];
    const withReadings = (
      p: ReturnType<typeof planPreflight>,
      readings: Record<string, ReturnType<typeof reading>>,
    ) => ({
      ...p,
      nodes: p.nodes.map(n => ({
        ...n,
        ...(readings[n.node]
          ? { versions: { firmware: readings[n.node] } }
          : {}),
      })),
    });
    const api = apiWithSources();
    api.planPreflight.mockImplementation(async (_cluster, query) => {
      if (query.intent !== 'firmware') return planPreflight(NODES);
      // BIOS named: worker-2's BIOS is at 2.5.0, so it is skipped, its reading with it.
      if (query.targets?.join() === BIOS && query.version === '2.5.0') {
        return withReadings(
          planPreflight(['worker-1', 'worker-3'], {
            intent: 'firmware',
            imageURI: uri,
            skipped: [
              {
                node: 'worker-2',
                reason: 'already at 2.5.0',
                firmware: reading('2.5.0'),
              },
            ],
            typedCount: 2,
            token: 'plan-token-bios',
          }),
          { 'worker-1': reading('2.4.0') },
        );
      }
      return withReadings(
        planPreflight(NODES, {
          intent: 'firmware',
          imageURI: uri,
          typedCount: 3,
          token: 'plan-token-firmware',
        }),
        { 'worker-1': reading('2.4.0'), 'worker-2': reading('2.5.0') },
      );
    });
    api.createPlan.mockResolvedValue({ name: 'firmware-plan-abc' });
    render(api);
    fireEvent.click(await screen.findByLabelText('Update firmware'));
    typeInto('install-rest', 'bios/2.5.0.bin');
    typeInto('install-version', '2.5.0');
    const group = await screen.findByRole('group', { name: 'Components' });
    expect(group).toHaveTextContent(
      'None checked: the BMC picks (any component that changes counts)',
    );
    // One checkbox per id, with every version the servers report.
    expect(
      within(group)
        .getAllByRole('checkbox')
        .map(b => b.closest('label')?.textContent),
    ).toEqual(['BIOS (now 2.4.0, 2.5.0)', 'BMC (now 7.10)']);
    fireEvent.click(within(group).getByRole('checkbox', { name: /^BIOS/ }));
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenLastCalledWith('rack', {
        intent: 'firmware',
        nodes: NODES,
        maxParallel: 1,
        imageURI: uri,
        version: '2.5.0',
        targets: [BIOS],
      }),
    );
    const skipped = await screen.findByTestId('plan-skipped');
    expect(skipped).toHaveTextContent('worker-2: already at 2.5.0');
    // The skipped server's components stay in the choice, BIOS still checked.
    expect(
      within(screen.getByRole('group', { name: 'Components' })).getByRole(
        'checkbox',
        { name: /^BIOS \(now 2\.4\.0, 2\.5\.0\)/ },
      ),
    ).toBeChecked();
    fireEvent.change(screen.getByLabelText(/^Reason/), {
      target: { value: 'BIOS 2.5 (memory training fix)' },
    });
    fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
    fireEvent.change(
      screen.getByLabelText(/Type the number of servers to update \(2\)/),
      { target: { value: '2' } },
    );
    fireEvent.click(screen.getByTestId('plan-submit'));
    await screen.findByRole('link', { name: 'firmware-plan-abc' });
    expect(api.createPlan).toHaveBeenCalledWith('rack', {
      intent: 'firmware',
      nodes: NODES,
      maxParallel: 1,
      firmware: { imageURI: uri, version: '2.5.0', targets: [BIOS] },
      reason: 'BIOS 2.5 (memory training fix)',
      preflightToken: 'plan-token-bios',
      typedCount: 2,
    });
  });

  it('says which setting is empty when the deployment allows no image', async () => {
    const api = fakeServersApi(serverList([]));
    api.planPreflight.mockResolvedValue(planPreflight(NODES));
    render(api);
    fireEvent.click(await screen.findByLabelText('Upgrade Talos'));
    expect(await screen.findByTestId('install-no-sources')).toHaveTextContent(
      'servers.upgrades.talosImages is empty',
    );
    expect(screen.getByTestId('plan-submit')).toBeDisabled();
  });
});
