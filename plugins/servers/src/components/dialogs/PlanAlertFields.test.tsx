import '@testing-library/jest-dom';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { fakeServersApi, serverList } from '../../testing/fixtures';
import { planPreflight, renderWithApi } from '../../__testUtils__/plans';
import { ACKNOWLEDGEMENT } from './ceremonyText';
import { PlanDialog } from './PlanDialog';
import { alertGateOf, EMPTY_ALERT_DRAFT } from './PlanAlertFields';

const NODES = ['worker-1', 'worker-2'];

const nodeDown = {
  fingerprint: 'f1',
  alertname: 'NodeDown',
  severity: 'critical',
  state: 'firing' as const,
  silencedBy: [],
  startsAt: '2026-08-04T10:00:00Z',
  labels: { alertname: 'NodeDown', node: 'worker-7' },
  nodes: ['worker-7'],
};

describe('PlanDialog: the alert gate and the healthy return', () => {
  it('offers the gate (Rackside-silenced ignored by default), shows what holds it now, and sends it', async () => {
    const api = fakeServersApi(serverList([]));
    api.planPreflight.mockImplementation(async (_cluster, query) =>
      planPreflight(NODES, {
        ...(query.alertGate
          ? {
              alerts: {
                configured: true,
                known: true,
                holding: [nodeDown],
                readAt: '2026-08-04T10:01:00Z',
              },
            }
          : {}),
      }),
    );
    api.createPlan.mockResolvedValue({ name: 'drain-plan-abc' });
    await renderWithApi(
      <PlanDialog cluster="rack" nodes={NODES} onClose={jest.fn()} />,
      api,
    );
    await screen.findByTestId('plan-estimate-total');
    expect(screen.queryByTestId('plan-gate-alerts')).toBeNull();

    fireEvent.click(screen.getByTestId('plan-alert-gate'));
    expect(screen.getByTestId('plan-alert-ignore-rackside')).toBeChecked();
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenLastCalledWith('rack', {
        intent: 'drain',
        nodes: NODES,
        maxParallel: 1,
        alertGate: { ignoreSilencedByRackside: true },
      }),
    );
    // Typing asks no pre-flight; leaving the field does.
    const calls = api.planPreflight.mock.calls.length;
    const names = screen.getByTestId('plan-alert-names');
    fireEvent.change(names, { target: { value: 'Node.*' } });
    fireEvent.change(screen.getByTestId('plan-alert-severities'), {
      target: { value: 'critical, warning' },
    });
    fireEvent.change(screen.getByTestId('plan-alert-matchers'), {
      target: { value: 'team="storage"\n\nrack=~"r1.*"' },
    });
    expect(api.planPreflight).toHaveBeenCalledTimes(calls);
    fireEvent.blur(screen.getByTestId('plan-alert-matchers'));
    const gate = {
      matchers: ['team="storage"', 'rack=~"r1.*"'],
      alertnames: 'Node.*',
      severities: ['critical', 'warning'],
      ignoreSilencedByRackside: true,
    };
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenLastCalledWith('rack', {
        intent: 'drain',
        nodes: NODES,
        maxParallel: 1,
        alertGate: gate,
      }),
    );
    const holding = await screen.findByTestId('plan-gate-alerts');
    expect(holding).toHaveTextContent('1 matching alert fires now');
    expect(within(holding).getByTestId('plan-gate-alert')).toHaveTextContent(
      'NodeDown · critical · worker-7',
    );

    fireEvent.click(screen.getByTestId('plan-healthy-return'));
    fireEvent.change(screen.getByTestId('plan-healthy-for-seconds'), {
      target: { value: '120' },
    });
    fireEvent.blur(screen.getByTestId('plan-healthy-for-seconds'));

    fireEvent.change(await screen.findByLabelText(/^Reason/), {
      target: { value: 'firmware update INC-12' },
    });
    fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
    const submit = screen.getByTestId('plan-submit');
    await waitFor(() => expect(submit).toBeEnabled());
    fireEvent.click(submit);
    await screen.findByRole('link', { name: 'drain-plan-abc' });
    expect(api.createPlan).toHaveBeenCalledWith(
      'rack',
      expect.objectContaining({
        gates: { alerts: gate },
        healthyReturn: { healthyForSeconds: 120 },
      }),
    );
  });

  it('refuses a healthy return that is not a whole number of seconds', async () => {
    const api = fakeServersApi(serverList([]));
    api.planPreflight.mockResolvedValue(planPreflight(NODES));
    await renderWithApi(
      <PlanDialog cluster="rack" nodes={NODES} onClose={jest.fn()} />,
      api,
    );
    await screen.findByTestId('plan-estimate-total');
    fireEvent.click(screen.getByTestId('plan-healthy-return'));
    fireEvent.change(screen.getByTestId('plan-healthy-for-seconds'), {
      target: { value: '1.5' },
    });
    fireEvent.blur(screen.getByTestId('plan-healthy-for-seconds'));
    fireEvent.change(await screen.findByLabelText(/^Reason/), {
      target: { value: 'firmware update INC-12' },
    });
    fireEvent.click(screen.getByLabelText(ACKNOWLEDGEMENT));
    expect(
      screen.getByText('a whole number of seconds from 0 to 3600'),
    ).toBeInTheDocument();
    expect(screen.getByTestId('plan-submit')).toBeDisabled();
  });

  it('says the gate holds while Alertmanager is unknown, and offers going on as an explicit opt-in that it sends as whenUnknown: Proceed', async () => {
    const api = fakeServersApi(serverList([]));
    api.planPreflight.mockResolvedValue(
      planPreflight(NODES, {
        alerts: {
          configured: true,
          known: false,
          reason: 'connect ECONNREFUSED',
          holding: [],
        },
      }),
    );
    await renderWithApi(
      <PlanDialog cluster="rack" nodes={NODES} onClose={jest.fn()} />,
      api,
    );
    await screen.findByTestId('plan-estimate-total');
    fireEvent.click(screen.getByTestId('plan-alert-gate'));
    await waitFor(() => expect(api.planPreflight).toHaveBeenCalledTimes(2));
    await screen.findByTestId('plan-estimate-total');
    expect(await screen.findByTestId('plan-gate-alerts')).toHaveTextContent(
      'Alertmanager could not be read (connect ECONNREFUSED): while it cannot, the gate holds every next step.',
    );
    const optIn = screen.getByTestId('plan-alert-proceed-unknown');
    expect(optIn).not.toBeChecked();
    expect(
      screen.queryByTestId('plan-alert-proceed-unknown-warning'),
    ).toBeNull();
    fireEvent.click(optIn);
    expect(
      screen.getByTestId('plan-alert-proceed-unknown-warning'),
    ).toHaveTextContent(/can take the plan past this gate/);
    await waitFor(() =>
      expect(api.planPreflight).toHaveBeenLastCalledWith(
        'rack',
        expect.objectContaining({
          alertGate: {
            ignoreSilencedByRackside: true,
            whenUnknown: 'Proceed',
          },
        }),
      ),
    );
    expect(await screen.findByTestId('plan-gate-alerts')).toHaveTextContent(
      'while it cannot, the gate does not hold (you opted in to go on).',
    );
  });

  it('a draft without the gate asks for none', () => {
    expect(alertGateOf(EMPTY_ALERT_DRAFT)).toBeUndefined();
    expect(
      alertGateOf({
        ...EMPTY_ALERT_DRAFT,
        gate: true,
        ignoreSilencedByRackside: false,
      }),
    ).toEqual({ ignoreSilencedByRackside: false });
    expect(
      alertGateOf({
        ...EMPTY_ALERT_DRAFT,
        gate: true,
        includeSilenced: true,
        proceedWhenUnknown: true,
      }),
    ).toEqual({
      ignoreSilencedByRackside: true,
      includeSilenced: true,
      whenUnknown: 'Proceed',
    });
  });
});
