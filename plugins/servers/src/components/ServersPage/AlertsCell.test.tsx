import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { screen } from '@testing-library/react';
import { listItemOf, server } from '../../testing/fixtures';
import { AlertsCell, alertTone, firingLabel } from './AlertsCell';
import { ServerTable } from './ServerTable';

describe('AlertsCell', () => {
  it('shows the firing count with the highest severity, and the silenced apart', async () => {
    await renderInTestApp(
      <AlertsCell
        alerts={{ firing: 2, silenced: 1, highestSeverity: 'critical' }}
      />,
    );
    const cell = screen.getByTestId('server-alerts');
    expect(cell).toHaveTextContent('2 firing · critical');
    expect(cell).toHaveTextContent('1 silenced');
    expect(screen.getByText('2 firing · critical')).toHaveAttribute(
      'data-tone',
      'error',
    );
  });

  it('shows only the silenced when nothing fires, and stale when the read failed', async () => {
    await renderInTestApp(
      <AlertsCell alerts={{ firing: 0, silenced: 1, stale: true }} />,
    );
    const cell = screen.getByTestId('server-alerts');
    expect(cell).not.toHaveTextContent('firing');
    expect(cell).toHaveTextContent('1 silenced');
    expect(cell).toHaveTextContent('alerts stale');
  });

  it('shows nothing without an Alertmanager or without any alert', async () => {
    await renderInTestApp(
      <div data-testid="host">
        <AlertsCell />
        <AlertsCell alerts={{ firing: 0, silenced: 0 }} />
      </div>,
    );
    expect(screen.getByTestId('host')).toBeEmptyDOMElement();
  });

  it("puts a server's alerts in its row of the Servers table", async () => {
    await renderInTestApp(
      <ServerTable
        cluster="rack"
        servers={[
          listItemOf(
            server('worker-1', {
              alerts: { firing: 1, silenced: 0, highestSeverity: 'warning' },
            }),
          ),
          listItemOf(server('worker-2')),
        ]}
        sortKey="name"
        sortDirection="asc"
        onSort={jest.fn()}
        onAction={jest.fn()}
      />,
    );
    const rows = await screen.findAllByTestId('server-row');
    expect(rows[0]).toHaveTextContent('1 firing · warning');
    expect(rows[1].querySelector('[data-testid="server-alerts"]')).toBeNull();
  });

  it('words a count without severity and tones below critical amber', () => {
    expect(firingLabel({ firing: 1, silenced: 0 })).toBe('1 firing');
    expect(alertTone('warning')).toBe('warning');
    expect(alertTone(undefined)).toBe('warning');
    expect(alertTone('CRITICAL')).toBe('error');
  });
});
