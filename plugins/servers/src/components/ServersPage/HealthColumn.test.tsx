import '@testing-library/jest-dom';
import { renderInTestApp } from '@backstage/frontend-test-utils';
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import {
  ceremonyFor,
  hardwareHealthRaise,
  type ServerHealthDetail,
} from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import { fakeServersApi, OK, server, serverList } from '../../testing/fixtures';
import { ServersPage } from './ServersPage';

function renderPage(api: ReturnType<typeof fakeServersApi>) {
  return renderInTestApp(<ServersPage />, { apis: [[serversApiRef, api]] });
}

const rowsOf = () => screen.queryAllByTestId('server-row');
const names = () => rowsOf().map(r => r.getAttribute('data-node'));
const minutesAgo = (minutes: number) =>
  new Date(Date.now() - minutes * 60_000).toISOString();

function health(
  rollup: ServerHealthDetail['rollup'],
  readAt: string,
  failed: string[] = [],
): ServerHealthDetail {
  return {
    rollup,
    readAt,
    failedParts: failed.length,
    parts: failed.map(name => ({
      kind: 'PowerSupply' as const,
      name,
      health: 'Critical' as const,
    })),
    logEntries: [],
    firmware: [],
    missing: [],
  };
}

function rack() {
  const critical = health('Critical', minutesAgo(3), ['PSU 1']);
  return fakeServersApi(
    serverList([
      server('a-ok', { health: health('OK', minutesAgo(20)) }),
      server('b-none'),
      server(
        'c-critical',
        { unschedulable: true, health: critical },
        {
          uncordon: {
            ...OK,
            ceremony: ceremonyFor(
              'uncordon',
              'allow',
              hardwareHealthRaise('uncordon', critical, Date.now()),
            ),
          },
        },
      ),
      server('d-warning', { health: health('Warning', minutesAgo(90)) }),
    ]),
  );
}

describe('the Health column', () => {
  it('shows each server’s rollup with the age of the reading, and a dash without one', async () => {
    renderPage(rack());
    await waitFor(() => expect(rowsOf()).toHaveLength(4));
    const cell = (node: string) =>
      within(
        rowsOf().find(r => r.getAttribute('data-node') === node)!,
      ).getByTestId('health-cell');
    expect(cell('c-critical')).toHaveTextContent('Critical3 min ago');
    expect(cell('a-ok')).toHaveTextContent('OK20 min ago');
    expect(cell('d-warning')).toHaveTextContent('Warning1 h ago');
    expect(cell('b-none')).toHaveTextContent('—');
    expect(cell('c-critical').querySelector('[title]')).toHaveAttribute(
      'title',
      expect.stringContaining('The BMC reports Critical: 1 part not OK'),
    );
  });

  it("sorts by health, the worst first (the rule the backend's windows use too)", async () => {
    const api = rack();
    renderPage(api);
    await waitFor(() => expect(rowsOf()).toHaveLength(4));
    fireEvent.click(
      within(screen.getByRole('columnheader', { name: 'Health' })).getByRole(
        'button',
      ),
    );
    await waitFor(() =>
      expect(names()).toEqual(['c-critical', 'd-warning', 'a-ok', 'b-none']),
    );
  });

  it("filters by health (the rule the backend's windows use too)", async () => {
    const api = rack();
    renderPage(api);
    await waitFor(() => expect(rowsOf()).toHaveLength(4));
    fireEvent.change(screen.getByLabelText('Filter servers of rack'), {
      target: { value: 'critical' },
    });
    await waitFor(() => expect(names()).toEqual(['c-critical']));
  });

  it('asks for the typed name to return a Critical server, and says why', async () => {
    const api = rack();
    renderPage(api);
    fireEvent.click(
      await screen.findByRole('button', {
        name: 'Return to service c-critical',
      }),
    );
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByTestId('ceremony-why')).toHaveTextContent(
      'the BMC reports Critical',
    );
    fireEvent.change(within(dialog).getByTestId('action-reason'), {
      target: { value: 'the power supply was replaced' },
    });
    const submit = within(dialog).getByRole('button', {
      name: 'Return to service',
    });
    expect(submit).toBeDisabled();
    fireEvent.change(within(dialog).getByTestId('action-typed-name'), {
      target: { value: 'c-critical' },
    });
    expect(submit).toBeEnabled();
    fireEvent.click(submit);
    await waitFor(() =>
      expect(api.requestAction).toHaveBeenCalledWith(
        'rack',
        'c-critical',
        'uncordon',
        expect.objectContaining({ typedName: 'c-critical' }),
      ),
    );
  });

  it('asks for the typed name to return a server whose hardware state is unknown, and says how old the reading is', async () => {
    // OK, but read 3 h ago by an operator sweeping every 15 min: the backend sends the
    // typed-name rung, the dialog rebuilds its why from the row by the same rule.
    const stale = {
      ...health('OK', minutesAgo(180)),
      sweepIntervalSeconds: 900,
    };
    const api = fakeServersApi(
      serverList([
        server(
          'e-stale',
          { unschedulable: true, health: stale },
          {
            uncordon: {
              ...OK,
              ceremony: ceremonyFor(
                'uncordon',
                'allow',
                hardwareHealthRaise('uncordon', stale, Date.now()),
              ),
            },
          },
        ),
      ]),
    );
    renderPage(api);
    fireEvent.click(
      await screen.findByRole('button', {
        name: 'Return to service e-stale',
      }),
    );
    const dialog = await screen.findByRole('dialog');
    expect(within(dialog).getByTestId('ceremony-why')).toHaveTextContent(
      'hardware state unknown: last reading 3 h ago (the sweep reads every 15 min)',
    );
    expect(within(dialog).getByTestId('action-typed-name')).toBeInTheDocument();
  });
});
