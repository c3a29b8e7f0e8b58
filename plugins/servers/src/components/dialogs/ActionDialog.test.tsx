import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { ResponseError } from '@backstage/errors';
import { ceremonyFor, HAZARD_TITLE } from '@rackside/plugin-servers-common';
import { PreflightChangedError, serversApiRef } from '../../api';
import {
  fakeServersApi,
  responseError,
  serverList,
} from '../../testing/fixtures';
import { preflightResponse, refusedPreflight } from '../../testing/drain';
import {
  nodeLocalAllowedPreflight,
  nodeLocalRefusedPreflight,
} from '../../testing/drainRules';
import {
  hazardPreflight,
  rebootPreflight,
  refusedRebootPreflight,
} from '../../testing/power';
import { ActionDialog } from './ActionDialog';
import {
  ACKNOWLEDGEMENT,
  IMPACT_CHANGED,
  NOTHING_CHANGED,
  shutdownReturnText,
  TYPED_REASON_HINT,
} from './ceremonyText';

const DRAIN_OFFER = {
  offered: true,
  allowed: true,
  ceremony: ceremonyFor('drain', 'allow'),
};

function renderDrain(api: ReturnType<typeof fakeServersApi>) {
  const onDone = jest.fn();
  const onClose = jest.fn();
  renderInTestApp(
    <ActionDialog
      cluster="rack"
      node="worker-1"
      action="drain"
      offer={DRAIN_OFFER}
      onClose={onClose}
      onDone={onDone}
    />,
    { apis: [[serversApiRef, api]] },
  );
  return { onDone, onClose };
}

const submitButton = () =>
  within(screen.getByRole('dialog')).getByRole('button', { name: 'Drain' });
const ackBox = () => screen.getByTestId('preflight-ack');
const typeReason = (text: string) =>
  fireEvent.change(screen.getByTestId('action-reason'), {
    target: { value: text },
  });

describe('the drain dialog', () => {
  it('takes the pre-flight when it opens and shows it as readable lists', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(preflightResponse());
    renderDrain(api);
    const preflight = await screen.findByTestId('preflight');
    expect(api.preflight).toHaveBeenCalledWith('rack', 'worker-1', 'drain', {
      deleteEmptyDirData: false,
      force: false,
    });

    const evict = within(preflight).getByTestId('preflight-evict');
    expect(evict).toHaveTextContent('Pods to evict (2)');
    expect(evict).toHaveTextContent('shop/web-7d9f-abcde');
    expect(evict).toHaveTextContent(
      'owned by ReplicaSet/web-7d9f · grace period 30 s',
    );
    expect(evict).toHaveTextContent('already terminating');

    const daemonSet = within(preflight).getByTestId('preflight-daemonset');
    expect(daemonSet).toHaveTextContent('DaemonSet pods left in place (1)');
    expect(daemonSet).toHaveTextContent('monitoring/node-exporter-x1');

    const budgets = within(preflight).getByTestId('preflight-budgets');
    expect(budgets).toHaveTextContent('shop/web: allows 1 disruption');
    expect(budgets).not.toHaveTextContent('blocks evictions now');

    expect(within(preflight).getByTestId('preflight-quorum')).toHaveTextContent(
      'A drain does not take a control-plane member down.',
    );
    expect(within(preflight).getByTestId('preflight-quorum')).toHaveTextContent(
      'Members 3, quorum 2, ready 3, margin 1.',
    );
    expect(within(preflight).queryByTestId('preflight-refused')).toBeNull();
    expect(within(preflight).queryByTestId('preflight-blockers')).toBeNull();
    // Nothing is refused, so the eviction options stay out of the way.
    expect(screen.queryByTestId('preflight-options')).toBeNull();
  });

  it('submits only once the impact is acknowledged, with its token and options', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(preflightResponse());
    api.requestAction.mockResolvedValue({ name: 'worker-1-drain-abc' });
    const { onDone } = renderDrain(api);
    await screen.findByTestId('preflight');
    typeReason('kernel update INC-7');
    expect(submitButton()).toBeDisabled();
    expect(screen.getByLabelText(ACKNOWLEDGEMENT)).not.toBeChecked();
    fireEvent.click(ackBox());
    expect(submitButton()).toBeEnabled();
    fireEvent.click(submitButton());
    await waitFor(() =>
      expect(onDone).toHaveBeenCalledWith('worker-1-drain-abc'),
    );
    expect(api.requestAction).toHaveBeenCalledWith(
      'rack',
      'worker-1',
      'drain',
      {
        reason: 'kernel update INC-7',
        preflightToken: 'tok-1',
        deleteEmptyDirData: false,
        force: false,
      },
    );
  });

  it('does not submit without a reason even when acknowledged', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(preflightResponse());
    renderDrain(api);
    await screen.findByTestId('preflight');
    fireEvent.click(ackBox());
    expect(submitButton()).toBeDisabled();
  });

  it('explains refused pods and blocking budgets, and asks again with an option', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight
      .mockResolvedValueOnce(refusedPreflight())
      .mockResolvedValueOnce(
        preflightResponse({
          options: { deleteEmptyDirData: true, force: false },
          token: 'tok-emptydir',
        }),
      );
    api.requestAction.mockResolvedValue({ name: 'worker-1-drain-abc' });
    renderDrain(api);
    const preflight = await screen.findByTestId('preflight');
    expect(
      within(preflight).getByTestId('preflight-blockers'),
    ).toHaveTextContent(
      'shop/cache-5c-xyz would be refused: allow deleteEmptyDirData to evict it.',
    );
    const refused = within(preflight).getByTestId('preflight-refused');
    expect(refused).toHaveTextContent('Pods refused (1)');
    expect(refused).toHaveTextContent(
      'it has emptyDir volumes whose data is lost on eviction',
    );
    const budgets = within(preflight).getByTestId('preflight-budgets');
    const payments = within(budgets)
      .getByText('shop/payments: allows 0 disruptions')
      .closest('li')!;
    expect(payments).toHaveAttribute('data-blocks-now', 'true');
    expect(payments).toHaveTextContent('blocks evictions now');
    expect(
      within(budgets).getByText('shop/web: allows 1 disruption').closest('li'),
    ).toHaveAttribute('data-blocks-now', 'false');
    expect(
      within(preflight).getByTestId('preflight-blocking'),
    ).toHaveTextContent('Evictions covered by payments are refused');

    // A pre-flight that cannot proceed cannot be acknowledged.
    typeReason('kernel update INC-7');
    expect(ackBox()).toBeDisabled();
    expect(submitButton()).toBeDisabled();

    const options = screen.getByTestId('preflight-options');
    expect(options).toHaveTextContent('Data in emptyDir volumes is lost.');
    expect(options).toHaveTextContent(
      'Pods without a controller are not recreated.',
    );
    fireEvent.click(
      within(options).getByLabelText('Also evict pods with emptyDir volumes'),
    );
    await waitFor(() =>
      expect(api.preflight).toHaveBeenLastCalledWith(
        'rack',
        'worker-1',
        'drain',
        {
          deleteEmptyDirData: true,
          force: false,
        },
      ),
    );
    await waitFor(() =>
      expect(screen.getByTestId('preflight')).toHaveAttribute(
        'data-token',
        'tok-emptydir',
      ),
    );
    fireEvent.click(ackBox());
    fireEvent.click(submitButton());
    await waitFor(() =>
      expect(api.requestAction).toHaveBeenCalledWith(
        'rack',
        'worker-1',
        'drain',
        {
          reason: 'kernel update INC-7',
          preflightToken: 'tok-emptydir',
          deleteEmptyDirData: true,
          force: false,
        },
      ),
    );
  });

  it('shows the new pre-flight after a 409 and asks for the acknowledgement again', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(preflightResponse());
    const changed = preflightResponse({
      token: 'tok-2',
      evict: [
        ...preflightResponse().evict,
        {
          namespace: 'shop',
          name: 'api-new-pod',
          controller: 'ReplicaSet/api-1',
          gracePeriodSeconds: 10,
          terminating: false,
        },
      ],
    });
    const conflict = await responseError(409, 'Conflict', {
      name: 'ConflictError',
      message: 'The impact changed since the pre-flight was taken',
    });
    api.requestAction
      .mockRejectedValueOnce(
        new PreflightChangedError(
          'The impact changed since the pre-flight was taken',
          changed,
          conflict as ResponseError,
        ),
      )
      .mockResolvedValueOnce({ name: 'worker-1-drain-abc' });
    const { onDone } = renderDrain(api);
    await screen.findByTestId('preflight');
    typeReason('kernel update INC-7');
    fireEvent.click(ackBox());
    fireEvent.click(submitButton());

    expect(await screen.findByTestId('preflight-changed')).toHaveTextContent(
      IMPACT_CHANGED,
    );
    expect(screen.getByTestId('preflight-evict')).toHaveTextContent(
      'Pods to evict (3)',
    );
    expect(screen.getByTestId('preflight-evict')).toHaveTextContent(
      'shop/api-new-pod',
    );
    expect(screen.queryByTestId('action-error')).toBeNull();
    // The old acknowledgement does not carry over to the new impact.
    expect(ackBox()).not.toBeChecked();
    expect(submitButton()).toBeDisabled();
    expect(screen.getByTestId('action-reason')).toHaveValue(
      'kernel update INC-7',
    );

    fireEvent.click(ackBox());
    fireEvent.click(submitButton());
    await waitFor(() =>
      expect(onDone).toHaveBeenCalledWith('worker-1-drain-abc'),
    );
    expect(api.requestAction).toHaveBeenLastCalledWith(
      'rack',
      'worker-1',
      'drain',
      expect.objectContaining({ preflightToken: 'tok-2' }),
    );
    // The backend's pre-flight is shown as it is: no second request for it.
    expect(api.preflight).toHaveBeenCalledTimes(1);
  });

  it('says why the pre-flight could not be taken and offers no way to submit', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockRejectedValueOnce(
      await responseError(403, 'Forbidden', {
        name: 'NotAllowedError',
        message: 'You may not drain worker-1',
      }),
    );
    api.preflight.mockResolvedValueOnce(preflightResponse());
    renderDrain(api);
    const error = await screen.findByTestId('preflight-error');
    expect(error).toHaveTextContent(
      'Could not take the pre-flight: You may not drain worker-1',
    );
    typeReason('kernel update INC-7');
    expect(submitButton()).toBeDisabled();
    expect(screen.queryByTestId('preflight-ack')).toBeNull();
    fireEvent.click(within(error).getByRole('button', { name: 'Try again' }));
    expect(await screen.findByTestId('preflight')).toBeInTheDocument();
    expect(api.preflight).toHaveBeenCalledTimes(2);
  });

  it('shows a ceremony 400 from the backend under the form', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(preflightResponse());
    api.requestAction.mockRejectedValue(
      await responseError(400, 'Bad Request', {
        name: 'InputError',
        message:
          'Acknowledge the pre-flight impact: the request carries no pre-flight token.',
      }),
    );
    renderDrain(api);
    await screen.findByTestId('preflight');
    typeReason('kernel update INC-7');
    fireEvent.click(ackBox());
    fireEvent.click(submitButton());
    expect(await screen.findByTestId('action-error')).toHaveTextContent(
      'Acknowledge the pre-flight impact',
    );
  });
});

describe('the drain dialog with data on the node (section 16)', () => {
  const NODE_LOCAL_LABEL = 'Also evict pods with data on this node';
  const NODE_LOCAL_WARNING =
    'Data on this node will be unavailable until the node returns: these pods cannot run anywhere else until then.';

  it('offers no node-local option, and sends none, where the pre-flight lists no such data', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(refusedPreflight());
    renderDrain(api);
    const options = await screen.findByTestId('preflight-options');
    // The emptyDir refusal brings the other options, not this one.
    expect(
      within(options).getByLabelText('Also evict pods with emptyDir volumes'),
    ).toBeInTheDocument();
    expect(within(options).queryByLabelText(NODE_LOCAL_LABEL)).toBeNull();
    expect(options).not.toHaveTextContent('Data on this node');
  });

  it('ticks the option on purpose: a new pre-flight with it, then the request carries it', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight
      .mockResolvedValueOnce(nodeLocalRefusedPreflight())
      .mockResolvedValueOnce(nodeLocalAllowedPreflight())
      .mockResolvedValueOnce(nodeLocalRefusedPreflight({ token: 'tok-again' }))
      .mockResolvedValueOnce(
        nodeLocalAllowedPreflight({ token: 'tok-allowed-2' }),
      );
    api.requestAction.mockResolvedValue({ name: 'worker-5-drain-abc' });
    const { onDone } = renderDrain(api);
    const preflight = await screen.findByTestId('preflight');
    expect(api.preflight).toHaveBeenLastCalledWith(
      'rack',
      'worker-1',
      'drain',
      {
        deleteEmptyDirData: false,
        force: false,
      },
    );
    expect(
      within(preflight).getByTestId('preflight-node-local'),
    ).toHaveTextContent('refused unless allowed');
    typeReason('disk swap, INC-20');
    expect(ackBox()).toBeDisabled();

    // The label names the checkbox; the warning describes it.
    const box = screen.getByLabelText(NODE_LOCAL_LABEL);
    expect(box).not.toBeChecked();
    expect(box).toHaveAccessibleDescription(NODE_LOCAL_WARNING);
    expect(screen.getByText(NODE_LOCAL_WARNING)).toBeVisible();

    fireEvent.click(box);
    await waitFor(() =>
      expect(screen.getByTestId('preflight')).toHaveAttribute(
        'data-token',
        'tok-local-allowed',
      ),
    );
    expect(api.preflight).toHaveBeenLastCalledWith(
      'rack',
      'worker-1',
      'drain',
      {
        deleteEmptyDirData: false,
        force: false,
        allowNodeLocalData: true,
      },
    );
    const local = screen.getByTestId('preflight-node-local');
    expect(local).toHaveTextContent(
      'evicted: unavailable until the node is back',
    );
    expect(screen.getByLabelText(NODE_LOCAL_LABEL)).toBeChecked();

    // Unticked, the pre-flight is taken again without it (and not acknowledged).
    fireEvent.click(screen.getByLabelText(NODE_LOCAL_LABEL));
    await waitFor(() =>
      expect(screen.getByTestId('preflight')).toHaveAttribute(
        'data-token',
        'tok-again',
      ),
    );
    expect(api.preflight.mock.calls[2][3]).toEqual({
      deleteEmptyDirData: false,
      force: false,
    });
    expect(api.preflight.mock.calls[2][3]).not.toHaveProperty(
      'allowNodeLocalData',
    );
    expect(ackBox()).toBeDisabled();

    fireEvent.click(screen.getByLabelText(NODE_LOCAL_LABEL));
    await waitFor(() =>
      expect(screen.getByTestId('preflight')).toHaveAttribute(
        'data-token',
        'tok-allowed-2',
      ),
    );
    fireEvent.click(ackBox());
    fireEvent.click(submitButton());
    await waitFor(() =>
      expect(onDone).toHaveBeenCalledWith('worker-5-drain-abc'),
    );
    expect(api.requestAction).toHaveBeenCalledWith(
      'rack',
      'worker-1',
      'drain',
      {
        reason: 'disk swap, INC-20',
        preflightToken: 'tok-allowed-2',
        deleteEmptyDirData: false,
        force: false,
        allowNodeLocalData: true,
      },
    );
  });

  it('sends no allowNodeLocalData when it was not ticked', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(preflightResponse());
    api.requestAction.mockResolvedValue({ name: 'worker-1-drain-abc' });
    const { onDone } = renderDrain(api);
    await screen.findByTestId('preflight');
    expect(screen.queryByLabelText(NODE_LOCAL_LABEL)).toBeNull();
    typeReason('kernel update INC-7');
    fireEvent.click(ackBox());
    fireEvent.click(submitButton());
    await waitFor(() => expect(onDone).toHaveBeenCalled());
    const body = api.requestAction.mock.calls[0][3];
    expect(body).not.toHaveProperty('allowNodeLocalData');
    expect(api.preflight.mock.calls[0][3]).not.toHaveProperty(
      'allowNodeLocalData',
    );
  });
});

describe('the cordon dialog', () => {
  it('takes no pre-flight', async () => {
    const api = fakeServersApi(serverList([]));
    renderInTestApp(
      <ActionDialog
        cluster="rack"
        node="worker-1"
        action="cordon"
        offer={{
          offered: true,
          allowed: true,
          ceremony: ceremonyFor('cordon', 'allow'),
        }}
        onClose={jest.fn()}
        onDone={jest.fn()}
      />,
      { apis: [[serversApiRef, api]] },
    );
    expect(await screen.findByTestId('action-reason')).toBeInTheDocument();
    expect(screen.queryByTestId('preflight-step')).toBeNull();
    expect(api.preflight).not.toHaveBeenCalled();
  });
});

describe('the reboot and shutdown dialogs', () => {
  function renderPower(
    api: ReturnType<typeof fakeServersApi>,
    options: {
      action?: 'reboot' | 'shutdown';
      node?: string;
      level?: 'allow' | 'hazard' | 'refuse';
      powerVerbs?: Array<'reboot' | 'shutdown' | 'power-on'>;
    } = {},
  ) {
    const action = options.action ?? 'reboot';
    const onDone = jest.fn();
    renderInTestApp(
      <ActionDialog
        cluster="rack"
        node={options.node ?? 'worker-1'}
        action={action}
        offer={{
          offered: true,
          allowed: true,
          ceremony: ceremonyFor(action, options.level ?? 'allow'),
        }}
        powerVerbs={options.powerVerbs}
        quorum={{
          derived: true,
          members: 3,
          quorum: 2,
          ready: 3,
          margin: 1,
          goingDown: [],
        }}
        onClose={jest.fn()}
        onDone={onDone}
      />,
      { apis: [[serversApiRef, api]] },
    );
    return { onDone };
  }

  const dialog = () => screen.getByRole('dialog');
  const button = (name: string) =>
    within(dialog()).getByRole('button', { name });
  const typeName = (text: string) =>
    fireEvent.change(screen.getByTestId('action-typed-name'), {
      target: { value: text },
    });

  it('asks for the reason, the acknowledged pre-flight and the typed node name before a reboot', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(rebootPreflight());
    api.requestAction.mockResolvedValue({ name: 'worker-1-reboot-abc' });
    const { onDone } = renderPower(api);
    const preflight = await screen.findByTestId('preflight');
    expect(api.preflight).toHaveBeenCalledWith('rack', 'worker-1', 'reboot', {
      deleteEmptyDirData: false,
      force: false,
    });
    expect(within(preflight).getByTestId('preflight-evict')).toHaveTextContent(
      'Pods to evict (2)',
    );
    expect(within(preflight).getByTestId('preflight-quorum')).toHaveTextContent(
      'quorum is unaffected',
    );
    expect(dialog()).toHaveTextContent('Reboot: worker-1');
    expect(dialog()).toHaveTextContent('Ready with a new boot ID');
    expect(screen.getByLabelText(/Type worker-1 to confirm/)).toBeVisible();
    // Not a hazard: no warning title.
    expect(within(dialog()).queryByTitle('warning')).toBeNull();

    const submit = button('Reboot');
    typeReason('firmware update, INC-11');
    expect(submit).toBeDisabled();
    fireEvent.click(ackBox());
    expect(submit).toBeDisabled();
    typeName('worker-1');
    expect(submit).toBeEnabled();
    // Each of the three is needed on its own.
    typeReason('');
    expect(submit).toBeDisabled();
    typeReason('firmware update, INC-11');
    fireEvent.click(ackBox());
    expect(submit).toBeDisabled();
    fireEvent.click(ackBox());
    expect(submit).toBeEnabled();

    fireEvent.click(submit);
    await waitFor(() =>
      expect(onDone).toHaveBeenCalledWith('worker-1-reboot-abc'),
    );
    expect(api.requestAction).toHaveBeenCalledWith(
      'rack',
      'worker-1',
      'reboot',
      {
        reason: 'firmware update, INC-11',
        typedName: 'worker-1',
        preflightToken: 'tok-reboot',
        deleteEmptyDirData: false,
        force: false,
      },
    );
  });

  it('does not take a typed name that is not exactly the node', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(rebootPreflight());
    renderPower(api);
    await screen.findByTestId('preflight');
    typeReason('firmware update, INC-11');
    fireEvent.click(ackBox());
    const submit = button('Reboot');
    for (const wrong of ['worker-2', 'Worker-1', 'worker-1 ', 'worker']) {
      typeName(wrong);
      expect(submit).toBeDisabled();
      expect(screen.getByTestId('action-typed-name')).toHaveAttribute(
        'aria-invalid',
        'true',
      );
      expect(dialog()).toHaveTextContent(
        'That is not worker-1: type the node name exactly.',
      );
    }
    typeName('worker-1');
    expect(submit).toBeEnabled();
    expect(screen.getByTestId('action-typed-name')).toHaveAttribute(
      'aria-invalid',
      'false',
    );
    expect(dialog()).not.toHaveTextContent('That is not worker-1');
  });

  it('marks the hazard tier: warning title, the reason typed out, the typed name, the pre-flight', async () => {
    const api = fakeServersApi(serverList([]));
    // The row said typed-name; the pre-flight, newer, says hazard.
    api.preflight.mockResolvedValue(hazardPreflight());
    api.requestAction.mockResolvedValue({ name: 'cp-1-reboot-abc' });
    renderPower(api, { node: 'cp-1' });
    await screen.findByTestId('preflight');
    const title = within(dialog()).getByRole('heading', { level: 2 });
    expect(title).toHaveTextContent(HAZARD_TITLE);
    expect(within(title).getByTitle('warning')).toBeInTheDocument();
    expect(within(dialog()).getByTestId('preflight-quorum')).toHaveTextContent(
      'margin 1, margin afterwards 0',
    );

    // The reason is written, not picked: no suggestions, no autofill.
    expect(screen.getByTestId('action-reason')).toHaveAttribute(
      'autocomplete',
      'off',
    );
    expect(dialog()).toHaveTextContent(TYPED_REASON_HINT);
    expect(within(dialog()).queryByRole('listbox')).toBeNull();
    expect(
      within(dialog())
        .getAllByRole('button')
        .map(b => b.textContent),
    ).toEqual(['Cancel', 'Reboot']);

    const submit = button('Reboot');
    typeReason('cp-1 firmware, INC-12, cp-2 and cp-3 checked');
    fireEvent.click(ackBox());
    expect(submit).toBeDisabled();
    typeName('cp-1');
    expect(submit).toBeEnabled();
    fireEvent.click(submit);
    await waitFor(() =>
      expect(api.requestAction).toHaveBeenCalledWith(
        'rack',
        'cp-1',
        'reboot',
        expect.objectContaining({
          typedName: 'cp-1',
          preflightToken: 'tok-hazard',
        }),
      ),
    );
  });

  it('shows a refused pre-flight as the refusal, with the guard’s numbers and no way to submit', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(refusedRebootPreflight());
    renderPower(api, { node: 'cp-2' });
    const refused = await screen.findByTestId('action-refused');
    await waitFor(() =>
      expect(refused).toHaveTextContent(
        'Rebooting cp-2 would drop the ready control-plane members below quorum.',
      ),
    );
    expect(screen.getByTestId('action-refused-numbers')).toHaveTextContent(
      'Members 3, quorum 2, ready 2, margin 0, margin afterwards -1.',
    );
    expect(refused).toHaveTextContent('No ceremony can allow it.');
    expect(
      within(dialog()).queryByRole('button', { name: 'Reboot' }),
    ).toBeNull();
    expect(screen.queryByTestId('action-reason')).toBeNull();
    expect(screen.queryByTestId('action-typed-name')).toBeNull();
    expect(screen.queryByTestId('preflight-ack')).toBeNull();
  });

  it('takes the pre-flight of an action the row already shows refused, for the guard’s sentence', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(refusedRebootPreflight());
    renderPower(api, { node: 'cp-2', level: 'refuse' });
    await waitFor(() =>
      expect(screen.getByTestId('action-refused')).toHaveTextContent(
        'Rebooting cp-2 would drop the ready control-plane members below quorum.',
      ),
    );
    expect(api.preflight).toHaveBeenCalledWith(
      'rack',
      'cp-2',
      'reboot',
      expect.anything(),
    );
    expect(
      within(dialog()).queryByRole('button', { name: 'Reboot' }),
    ).toBeNull();
  });

  it('explains a 409 after submit: below quorum with the numbers, nothing changed', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(hazardPreflight());
    api.requestAction.mockRejectedValue(
      await responseError(409, 'Conflict', {
        name: 'ConflictError',
        message:
          'Rebooting cp-1 would drop the ready control-plane members below quorum.',
        members: 3,
        quorum: 2,
        margin: 0,
      }),
    );
    renderPower(api, { node: 'cp-1' });
    await screen.findByTestId('preflight');
    typeReason('cp-1 firmware, INC-12');
    fireEvent.click(ackBox());
    typeName('cp-1');
    fireEvent.click(button('Reboot'));
    const error = await screen.findByTestId('action-error');
    expect(error).toHaveTextContent('Refused');
    expect(error).toHaveTextContent(
      'Rebooting cp-1 would drop the ready control-plane members below quorum.',
    );
    expect(error).toHaveTextContent('Members 3, quorum 2, margin 0.');
    expect(error).toHaveTextContent(NOTHING_CHANGED);
  });

  it('explains a 409 of the capability rule', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(rebootPreflight());
    api.requestAction.mockRejectedValue(
      await responseError(409, 'Conflict', {
        name: 'ConflictError',
        message:
          'worker-1 has no ServerBMC: the redfish channel does not know its BMC.',
      }),
    );
    renderPower(api);
    await screen.findByTestId('preflight');
    typeReason('firmware update, INC-11');
    fireEvent.click(ackBox());
    typeName('worker-1');
    fireEvent.click(button('Reboot'));
    const error = await screen.findByTestId('action-error');
    expect(error).toHaveTextContent('worker-1 has no ServerBMC');
    expect(error).toHaveTextContent(NOTHING_CHANGED);
    expect(error).not.toHaveTextContent('Members');
  });

  it('says how a shut-down machine comes back: power-on through the BMC', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(
      rebootPreflight({
        action: 'shutdown',
        ceremony: ceremonyFor('shutdown', 'allow'),
      }),
    );
    renderPower(api, {
      action: 'shutdown',
      powerVerbs: ['reboot', 'shutdown', 'power-on'],
    });
    await screen.findByTestId('preflight');
    expect(api.preflight).toHaveBeenCalledWith(
      'rack',
      'worker-1',
      'shutdown',
      expect.anything(),
    );
    expect(screen.getByTestId('shutdown-return')).toHaveTextContent(
      'use Power on on its row: Rackside asks its BMC to switch it on',
    );
    expect(screen.getByLabelText(/Type worker-1 to confirm/)).toBeVisible();
    expect(button('Shut down')).toBeDisabled();
  });

  it('says how a shut-down machine comes back: a person at the rack', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight.mockResolvedValue(
      rebootPreflight({
        action: 'shutdown',
        ceremony: ceremonyFor('shutdown', 'allow'),
      }),
    );
    renderPower(api, {
      action: 'shutdown',
      powerVerbs: ['reboot', 'shutdown'],
    });
    await screen.findByTestId('preflight');
    expect(screen.getByTestId('shutdown-return')).toHaveTextContent(
      'This power channel cannot switch worker-1 back on: a person at the rack has to power it on.',
    );
  });
});

describe('the shutdown dialog with data on the node', () => {
  it('sends allowNodeLocalData with the shutdown once ticked', async () => {
    const api = fakeServersApi(serverList([]));
    api.preflight
      .mockResolvedValueOnce(
        nodeLocalRefusedPreflight({
          action: 'shutdown',
          ceremony: ceremonyFor('shutdown', 'allow'),
        }),
      )
      .mockResolvedValueOnce(
        nodeLocalAllowedPreflight({
          action: 'shutdown',
          ceremony: ceremonyFor('shutdown', 'allow'),
          token: 'tok-shutdown-local',
        }),
      );
    api.requestAction.mockResolvedValue({ name: 'worker-5-shutdown-abc' });
    const onDone = jest.fn();
    renderInTestApp(
      <ActionDialog
        cluster="rack"
        node="worker-5"
        action="shutdown"
        offer={{
          offered: true,
          allowed: true,
          ceremony: ceremonyFor('shutdown', 'allow'),
        }}
        powerVerbs={['shutdown', 'power-on']}
        onClose={jest.fn()}
        onDone={onDone}
      />,
      { apis: [[serversApiRef, api]] },
    );
    await screen.findByTestId('preflight-node-local');
    fireEvent.click(
      screen.getByLabelText('Also evict pods with data on this node'),
    );
    await waitFor(() =>
      expect(screen.getByTestId('preflight')).toHaveAttribute(
        'data-token',
        'tok-shutdown-local',
      ),
    );
    typeReason('PSU swap, INC-21');
    fireEvent.change(screen.getByTestId('action-typed-name'), {
      target: { value: 'worker-5' },
    });
    fireEvent.click(ackBox());
    fireEvent.click(
      within(screen.getByRole('dialog')).getByRole('button', {
        name: 'Shut down',
      }),
    );
    await waitFor(() =>
      expect(onDone).toHaveBeenCalledWith('worker-5-shutdown-abc'),
    );
    expect(api.requestAction.mock.calls[0][3]).toMatchObject({
      preflightToken: 'tok-shutdown-local',
      allowNodeLocalData: true,
    });
  });
});

describe('shutdownReturnText', () => {
  it('names the way back the channel offers', () => {
    expect(shutdownReturnText('w', ['power-on'])).toMatch(/BMC/);
    expect(shutdownReturnText('w', ['shutdown'])).toMatch(/person at the rack/);
    expect(shutdownReturnText('w', undefined)).toMatch(
      /through its BMC where the power channel can, otherwise by a person at the rack/,
    );
  });
});

describe('the healthy return, opt-in per request', () => {
  function renderCordon(api: ReturnType<typeof fakeServersApi>) {
    renderInTestApp(
      <ActionDialog
        cluster="rack"
        node="worker-1"
        action="cordon"
        offer={{
          offered: true,
          allowed: true,
          ceremony: ceremonyFor('cordon', 'allow'),
        }}
        onClose={jest.fn()}
        onDone={jest.fn()}
      />,
      { apis: [[serversApiRef, api]] },
    );
  }
  const submit = () =>
    within(screen.getByRole('dialog')).getByRole('button', { name: 'Cordon' });

  it('sends no healthyReturn unless ticked', async () => {
    const api = fakeServersApi(serverList([]));
    api.requestAction.mockResolvedValue({ name: 'm-1' } as any);
    renderCordon(api);
    typeReason('replace the fan of worker-1');
    fireEvent.click(submit());
    await waitFor(() => expect(api.requestAction).toHaveBeenCalled());
    expect(api.requestAction.mock.calls[0][3]).not.toHaveProperty(
      'healthyReturn',
    );
  });

  it('ticked: sends the seconds, and refuses to send a number out of bounds', async () => {
    const api = fakeServersApi(serverList([]));
    api.requestAction.mockResolvedValue({ name: 'm-1' } as any);
    renderCordon(api);
    typeReason('replace the fan of worker-1');
    fireEvent.click(await screen.findByTestId('action-healthy-return'));
    const seconds = screen.getByTestId('action-healthy-for-seconds');
    fireEvent.change(seconds, { target: { value: '4000' } });
    expect(submit()).toBeDisabled();
    expect(
      screen.getByText('A whole number of seconds from 0 to 3600'),
    ).toBeInTheDocument();
    fireEvent.change(seconds, { target: { value: '30' } });
    expect(submit()).toBeEnabled();
    fireEvent.click(submit());
    await waitFor(() => expect(api.requestAction).toHaveBeenCalled());
    expect(api.requestAction.mock.calls[0][3]).toMatchObject({
      reason: 'replace the fan of worker-1',
      healthyReturn: { healthyForSeconds: 30 },
    });
  });
});
