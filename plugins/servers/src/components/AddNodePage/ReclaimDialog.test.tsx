import '@testing-library/jest-dom';
import { act } from 'react';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { signalApiRef } from '@backstage/plugin-signals-react';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { machinesApiRef } from '../../api';
import { responseError } from '../../testing/fixtures';
import { fakeMachinesApi, FOREIGN_UUID, reclaim } from '../../testing/machines';
import { ReclaimDialog } from './ReclaimDialog';

const TALOSCONFIG = 'context: plant-old\ncontexts:\n  plant-old: {}\n';

function signalsApi() {
  const subscribers = new Set<(message: any) => void>();
  return {
    api: {
      subscribe: jest.fn((_c: string, onMessage: any) => {
        subscribers.add(onMessage);
        return { unsubscribe: () => subscribers.delete(onMessage) };
      }),
    },
    deliver: (message: any) => subscribers.forEach(s => s(message)),
  };
}

function renderDialog(
  api: ReturnType<typeof fakeMachinesApi>,
  props: { address?: string; reclaim?: string } = {},
) {
  const signals = signalsApi();
  const onChanged = jest.fn();
  const onClose = jest.fn();
  renderInTestApp(
    <ReclaimDialog
      cluster="rack"
      namespace="rackside-system"
      talosClusters={['rack']}
      onClose={onClose}
      onChanged={onChanged}
      {...props}
    />,
    {
      apis: [
        [machinesApiRef, api],
        [signalApiRef, signals.api],
      ],
    },
  );
  return { onChanged, onClose, signals };
}

async function upload(text = TALOSCONFIG) {
  const input = screen.getByTestId('reclaim-talosconfig-file');
  const file = new File([text], 'plant-old.talosconfig', {
    type: 'text/plain',
  });
  await act(async () => {
    fireEvent.change(input, { target: { files: [file] } });
  });
  await screen.findByText(/plant-old\.talosconfig \(\d+ characters\)/);
}

const dialog = () => screen.getByRole('dialog');
const button = (name: string | RegExp) =>
  within(dialog()).getByRole('button', { name });

describe('the Reset and add dialog', () => {
  it('asks for the talosconfig and a reason with the stored-credential warning, then sends them once', async () => {
    const api = fakeMachinesApi();
    api.getReclaim.mockResolvedValue(reclaim());
    const { onChanged } = renderDialog(api, { address: '127.0.10.42' });
    expect(dialog()).toHaveTextContent('Add a machine from another cluster');
    const warning = screen.getByTestId('reclaim-credential-warning');
    expect(warning).toHaveTextContent('The credential is stored');
    expect(warning).toHaveTextContent(
      'until the reset is sent or the request expires after 15 minutes; then the Secret is deleted',
    );
    expect(button('Continue')).toBeDisabled();
    await upload();
    fireEvent.change(screen.getByTestId('reclaim-ttl'), {
      target: { value: '30' },
    });
    expect(warning).toHaveTextContent('expires after 30 minutes');
    fireEvent.change(screen.getByTestId('reclaim-reason'), {
      target: { value: 'take over the plant-old worker, OPS-42' },
    });
    fireEvent.click(button('Continue'));
    await waitFor(() =>
      expect(api.createReclaim).toHaveBeenCalledWith('rack', {
        address: '127.0.10.42',
        talosconfig: TALOSCONFIG,
        reason: 'take over the plant-old worker, OPS-42',
        ttlMinutes: 30,
      }),
    );
    expect(onChanged).toHaveBeenCalled();
    // From here the dialog follows the request.
    expect(await screen.findByTestId('reclaim-phase')).toHaveTextContent(
      "Reading the machine's UUID through the other cluster's talosconfig",
    );
    expect(api.getReclaim).toHaveBeenCalledWith('rack', 'reclaim-abc-1234');
    expect(screen.queryByTestId('reclaim-talosconfig-file')).toBeNull();
  });

  it('keeps the form and shows what the backend found wrong', async () => {
    const api = fakeMachinesApi();
    api.createReclaim.mockRejectedValue(
      await responseError(400, 'Bad Request', {
        name: 'InputError',
        message:
          'talosconfig context "plant-old" lacks key: a client certificate is needed for a configured machine',
      }),
    );
    renderDialog(api, { address: '127.0.10.42' });
    await upload();
    fireEvent.change(screen.getByTestId('reclaim-reason'), {
      target: { value: 'take over the plant-old worker' },
    });
    fireEvent.click(button('Continue'));
    expect(await screen.findByTestId('reclaim-error')).toHaveTextContent(
      'talosconfig context "plant-old" lacks key',
    );
    expect(screen.getByTestId('reclaim-form')).toBeInTheDocument();
  });

  it('puts a 400 about a field under that field: announced and tied to it', async () => {
    const api = fakeMachinesApi();
    api.createReclaim.mockRejectedValue(
      await responseError(400, 'Bad Request', {
        name: 'InputError',
        message: 'invalid request body: ttlMinutes must be at most 1440',
      }),
    );
    renderDialog(api, { address: '127.0.10.42' });
    await upload();
    const ttl = screen.getByTestId('reclaim-ttl');
    fireEvent.change(ttl, { target: { value: '5000' } });
    fireEvent.change(screen.getByTestId('reclaim-reason'), {
      target: { value: 'take over the plant-old worker' },
    });
    fireEvent.click(button('Continue'));
    await waitFor(() => expect(ttl).toHaveAttribute('aria-invalid', 'true'));
    const helper = document.getElementById(
      ttl.getAttribute('aria-describedby')!,
    )!;
    expect(helper).toHaveTextContent('ttlMinutes must be at most 1440');
    expect(helper).toHaveAttribute('aria-live', 'polite');
    // Once, under its field, not again below the form.
    expect(screen.queryByTestId('reclaim-error')).toBeNull();
  });

  it('asks for the typed UUID and sends the reset only for the UUID the operator read', async () => {
    const api = fakeMachinesApi();
    api.getReclaim.mockResolvedValue(
      reclaim({
        phase: 'AwaitingConfirmation',
        machineUUID: FOREIGN_UUID,
        expiresAt: '2026-12-01T10:15:00Z',
      }),
    );
    const { onChanged } = renderDialog(api, { reclaim: 'reclaim-abc-1234' });
    expect(await screen.findByTestId('reclaim-machine-uuid')).toHaveTextContent(
      FOREIGN_UUID,
    );
    const reset = button('Reset and add 127.0.10.42');
    expect(reset).toBeDisabled();
    const typed = screen.getByTestId('reclaim-typed-uuid');
    fireEvent.change(typed, {
      target: { value: '437933e7-5d1e-4d07-8455-ea5d78c647f4' },
    });
    expect(screen.getByText('This is not the UUID above.')).toBeInTheDocument();
    expect(reset).toBeDisabled();
    fireEvent.change(typed, { target: { value: FOREIGN_UUID.toUpperCase() } });
    expect(reset).toBeEnabled();
    fireEvent.click(reset);
    await waitFor(() =>
      expect(api.confirmReclaim).toHaveBeenCalledWith(
        'rack',
        'reclaim-abc-1234',
        {
          uuid: FOREIGN_UUID.toUpperCase(),
        },
      ),
    );
    expect(onChanged).toHaveBeenCalled();
    await waitFor(() => expect(api.getReclaim).toHaveBeenCalledTimes(2));
  });

  it('shows the backend refusing the typed UUID', async () => {
    const api = fakeMachinesApi();
    api.getReclaim.mockResolvedValue(
      reclaim({ phase: 'AwaitingConfirmation', machineUUID: FOREIGN_UUID }),
    );
    api.confirmReclaim.mockRejectedValue(
      await responseError(400, 'Bad Request', {
        name: 'InputError',
        message:
          'uuid does not match the UUID of the machine at 127.0.10.42: nothing was reset; check it and type it again',
      }),
    );
    renderDialog(api, { reclaim: 'reclaim-abc-1234' });
    fireEvent.change(await screen.findByTestId('reclaim-typed-uuid'), {
      target: { value: FOREIGN_UUID },
    });
    fireEvent.click(button('Reset and add 127.0.10.42'));
    expect(await screen.findByTestId('reclaim-error')).toHaveTextContent(
      'uuid does not match the UUID of the machine at 127.0.10.42: nothing was reset',
    );
  });

  it('follows the request live to Done with the result text', async () => {
    const api = fakeMachinesApi();
    api.getReclaim
      .mockResolvedValueOnce(
        reclaim({
          phase: 'WaitingForMaintenance',
          confirmed: true,
          resetSentAt: '2026-12-01T10:01:00Z',
        }),
      )
      .mockResolvedValue(
        reclaim({
          phase: 'Done',
          terminal: true,
          confirmed: true,
          result:
            '127.0.10.42 is back in maintenance mode with UUID bd49731e-ab42-45d9-9f81-6c7d0e506bdf.',
          audit: [
            {
              at: '2026-12-01T10:01:00Z',
              event: 'ResetSent',
              message: 'Reset sent',
            },
            { at: '2026-12-01T10:01:00Z', event: 'CredentialDeleted' },
          ],
        }),
      );
    const { signals } = renderDialog(api, { reclaim: 'reclaim-abc-1234' });
    expect(await screen.findByTestId('reclaim-phase')).toHaveTextContent(
      'Reset sent: waiting for the machine to come back in maintenance mode',
    );
    expect(dialog()).toHaveTextContent(
      'this fails if it has not answered there with the same UUID 10 minutes after the reset',
    );
    act(() => signals.deliver({ cluster: 'rack' }));
    const result = await screen.findByTestId('reclaim-result');
    expect(result).toHaveTextContent(
      'Done127.0.10.42 is back in maintenance mode with UUID bd49731e-ab42-45d9-9f81-6c7d0e506bdf. It shows under Machines as Pending',
    );
    expect(screen.getByTestId('reclaim-audit')).toHaveTextContent('ResetSent');
    expect(screen.getByTestId('reclaim-audit')).toHaveTextContent(
      'CredentialDeleted',
    );
  });

  it("shows a Failed request with the operator's hint", async () => {
    const api = fakeMachinesApi();
    api.getReclaim.mockResolvedValue(
      reclaim({
        phase: 'Failed',
        terminal: true,
        confirmed: true,
        result:
          '127.0.10.42 did not return to maintenance mode with UUID x: It may have taken a new address from DHCP',
      }),
    );
    renderDialog(api, { reclaim: 'reclaim-abc-1234' });
    const result = await screen.findByTestId('reclaim-result');
    expect(result).toHaveTextContent('Failed');
    expect(result).toHaveTextContent(
      'It may have taken a new address from DHCP',
    );
    expect(screen.queryByTestId('reclaim-typed-uuid')).toBeNull();
  });
});
