import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, waitFor } from '@testing-library/react';
import { ceremonyFor } from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import { fakeServersApi, serverList } from '../../testing/fixtures';
import { rebootPreflight } from '../../testing/power';
import { ActionDialog } from './ActionDialog';
import { ACKNOWLEDGEMENT } from './ceremonyText';
import { chipLabelSx } from '../ui/chips';

function renderReboot() {
  const api = fakeServersApi(serverList([]));
  api.preflight.mockResolvedValue(rebootPreflight());
  renderInTestApp(
    <ActionDialog
      cluster="rack"
      node="worker-1"
      action="reboot"
      offer={{
        offered: true,
        allowed: true,
        ceremony: ceremonyFor('reboot', 'allow'),
      }}
      onClose={jest.fn()}
      onDone={jest.fn()}
    />,
    { apis: [[serversApiRef, api]] },
  );
}

/** The text of the elements an element's aria-describedby names. */
const description = (el: HTMLElement) =>
  (el.getAttribute('aria-describedby') ?? '')
    .split(/\s+/)
    .filter(Boolean)
    .map(id => document.getElementById(id)?.textContent ?? '')
    .join(' ');

describe('the action dialog for a keyboard and a screen reader', () => {
  it('has the focus on the named dialog when it opens', async () => {
    renderReboot();
    const dialog = await screen.findByRole('dialog', {
      name: 'Reboot: worker-1',
    });
    await waitFor(() => expect(dialog).toHaveFocus());
  });

  it('labels the acknowledgement, the reason and the typed name', async () => {
    renderReboot();
    await screen.findByTestId('preflight');
    expect(screen.getByLabelText(ACKNOWLEDGEMENT)).toBe(
      screen.getByTestId('preflight-ack'),
    );
    expect(screen.getByLabelText(/^Reason/)).toBe(
      screen.getByTestId('action-reason'),
    );
    expect(screen.getByLabelText(/Type worker-1 to confirm/)).toBe(
      screen.getByTestId('action-typed-name'),
    );
  });

  it('ties the typed-name error to its field and announces it', async () => {
    renderReboot();
    await screen.findByTestId('preflight');
    const field = screen.getByTestId('action-typed-name');
    fireEvent.change(field, { target: { value: 'worker-2' } });
    expect(field).toHaveAttribute('aria-invalid', 'true');
    expect(description(field)).toMatch(/That is not worker-1/);
    const helper = document.getElementById(
      field.getAttribute('aria-describedby')!,
    )!;
    expect(helper).toHaveAttribute('aria-live', 'polite');
  });
});

describe('chipLabelSx', () => {
  it('gives the light palette colours a dark label, the others none', () => {
    expect(chipLabelSx('warning')).toEqual({
      color: 'common.black',
      transition: 'none',
    });
    expect(chipLabelSx('info')).toEqual({
      color: 'common.black',
      transition: 'none',
    });
    expect(chipLabelSx('success')).toEqual({ transition: 'none' });
    expect(chipLabelSx('error')).toEqual({ transition: 'none' });
  });
});
