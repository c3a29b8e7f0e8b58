/*
 * The plan controls and the selection for a user without servers:plan. A file of its
 * own: usePermission keeps its answers in a module-wide cache, which would carry the
 * allowed decisions of plans.test.tsx into these tests.
 */
import '@testing-library/jest-dom';
import { screen, waitFor } from '@testing-library/react';
import { fakeServersApi, server, serverList } from '../../testing/fixtures';
import { plan, renderWithApi } from '../../__testUtils__/plans';
import { ClusterSection } from '../ServersPage/ClusterSection';
import { PlanPage } from './PlanPage';

describe('without servers:plan', () => {
  it('offers no controls without servers:plan', async () => {
    const api = fakeServersApi(serverList([]));
    api.getPlan.mockResolvedValue(plan());
    await renderWithApi(
      <PlanPage cluster="rack" name="reboot-plan-1" />,
      api,
      false,
    );
    await screen.findByTestId('plan-phase');
    // Once the decision is in (usePermission may answer from its cache first).
    await waitFor(() =>
      expect(screen.queryByTestId('plan-pause')).not.toBeInTheDocument(),
    );
    expect(screen.queryByTestId('plan-cancel')).not.toBeInTheDocument();
  });

  it('offers no selection without servers:plan', async () => {
    const api = fakeServersApi(serverList([server('worker-1')]));
    await renderWithApi(<ClusterSection cluster="rack" />, api, false);
    await screen.findByTitle('worker-1');
    expect(
      screen.queryByRole('checkbox', { name: 'Select worker-1' }),
    ).not.toBeInTheDocument();
    expect(screen.queryByTestId('plan-toolbar-rack')).not.toBeInTheDocument();
  });
});
