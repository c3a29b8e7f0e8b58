/*
 * The page of an upgrade or firmware plan (issue 47): "N of M at vX", the installer image,
 * and each server's Talos (or firmware) version before and after.
 */
import '@testing-library/jest-dom';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { fakeServersApi, serverList } from '../../testing/fixtures';
import { plan, renderWithApi } from '../../__testUtils__/plans';
import { PlanPage } from './PlanPage';

const IMAGE = 'factory.talos.dev/installer/abc123:v1.12.0';

describe('the page of an upgrade plan', () => {
  it('says how many run the target, the image, and each server before and after', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(
      plan({
        name: 'upgrade-plan-1',
        intent: 'upgrade',
        upgrade: { image: IMAGE },
        versions: {
          target: 'v1.12.0',
          atTarget: 2,
          total: 3,
          text: '2 of 3 at v1.12.0',
        },
        nodes: [
          {
            name: 'worker-1',
            controlPlane: false,
            phase: 'Done',
            talosVersion: { before: 'v1.11.3', after: 'v1.12.0' },
          },
          {
            name: 'worker-2',
            controlPlane: false,
            phase: 'Skipped',
            message: 'already at v1.12.0',
            talosVersion: { before: 'v1.12.0', after: 'v1.12.0' },
          },
          {
            name: 'worker-3',
            controlPlane: false,
            phase: 'Running',
            talosVersion: { before: 'v1.11.3' },
          },
        ],
      }),
    );
    await renderWithApi(<PlanPage cluster="rack" name="upgrade-plan-1" />, api);
    expect(await screen.findByTestId('plan-versions')).toHaveTextContent(
      '2 of 3 at v1.12.0',
    );
    expect(screen.getByTestId('plan-image')).toHaveTextContent(
      `Installer image: ${IMAGE}`,
    );
    expect(
      within(screen.getByTestId('plan-steps')).getByRole('columnheader', {
        name: 'Talos',
      }),
    ).toBeInTheDocument();
    expect(screen.getByTestId('plan-step-versions-worker-1')).toHaveTextContent(
      'v1.11.3 → v1.12.0',
    );
    expect(screen.getByTestId('plan-step-worker-2')).toHaveTextContent(
      'already at v1.12.0',
    );
    expect(screen.getByTestId('plan-step-versions-worker-3')).toHaveTextContent(
      'v1.11.3 → …',
    );
  });

  it('a firmware plan with a version: "N of M at X" and each server\'s firmware before and after', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(
      plan({
        name: 'firmware-plan-2',
        intent: 'firmware',
        firmware: {
          imageURI: 'https://fw.plant.example/bios/2.20.0.bin',
          version: '2.20.0',
          targets: ['BIOS'],
        },
        versions: {
          target: '2.20.0',
          atTarget: 2,
          total: 3,
          text: '2 of 3 at 2.20.0',
        },
        nodes: [
          {
            name: 'worker-1',
            controlPlane: false,
            phase: 'Done',
            firmwareVersion: { before: '2.19.1', after: '2.20.0' },
          },
          {
            name: 'worker-2',
            controlPlane: false,
            phase: 'Skipped',
            message: 'already at 2.20.0',
            firmwareVersion: { after: '2.20.0' },
          },
          {
            name: 'worker-3',
            controlPlane: false,
            phase: 'Running',
            firmwareVersion: { before: '2.19.1' },
          },
        ],
      }),
    );
    await renderWithApi(
      <PlanPage cluster="rack" name="firmware-plan-2" />,
      api,
    );
    expect(await screen.findByTestId('plan-versions')).toHaveTextContent(
      '2 of 3 at 2.20.0',
    );
    const steps = screen.getByTestId('plan-steps');
    expect(
      within(steps).getByRole('columnheader', { name: 'Firmware' }),
    ).toBeInTheDocument();
    expect(
      within(steps).queryByRole('columnheader', { name: 'Talos' }),
    ).toBeNull();
    expect(screen.getByTestId('plan-step-versions-worker-1')).toHaveTextContent(
      '2.19.1 → 2.20.0',
    );
    expect(screen.getByTestId('plan-step-versions-worker-2')).toHaveTextContent(
      '? → 2.20.0',
    );
    expect(screen.getByTestId('plan-step-versions-worker-3')).toHaveTextContent(
      '2.19.1 → …',
    );
  });

  it("a renewal's own pre-flight asks for what the plan installs (image; a firmware plan's URI, version, targets, checksum)", async () => {
    const api = fakeServersApi(serverList([]));
    const checksum = `sha256:${'ab'.repeat(32)}`;
    api.getPlan.mockResolvedValue(
      plan({
        name: 'firmware-plan-1',
        intent: 'firmware',
        firmware: {
          imageURI: 'https://fw.plant.example/bios/2.20.0.bin',
          version: '2.20.0',
          targets: ['BIOS'],
          checksum,
        },
      }),
    );
    api.planPreflight.mockRejectedValue(new Error('not needed here'));
    await renderWithApi(
      <PlanPage cluster="rack" name="firmware-plan-1" />,
      api,
    );
    expect(await screen.findByTestId('plan-image-uri')).toHaveTextContent(
      'Firmware image: https://fw.plant.example/bios/2.20.0.bin',
    );
    fireEvent.click(screen.getByTestId('plan-renew'));
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenCalledWith('rack', {
        intent: 'firmware',
        // The steps not started (worker-2 runs).
        nodes: ['worker-3'],
        maxParallel: 2,
        imageURI: 'https://fw.plant.example/bios/2.20.0.bin',
        version: '2.20.0',
        targets: ['BIOS'],
        checksum,
      }),
    );
  });

  it('shows no versions for a reboot plan', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(plan());
    await renderWithApi(<PlanPage cluster="rack" name="reboot-plan-1" />, api);
    await screen.findByTestId('plan-phase');
    expect(screen.queryByTestId('plan-versions')).toBeNull();
    expect(screen.queryByTestId('plan-step-versions-worker-1')).toBeNull();
  });
});
