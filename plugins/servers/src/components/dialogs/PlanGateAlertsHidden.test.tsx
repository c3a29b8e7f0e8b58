import '@testing-library/jest-dom';
import { render, screen } from '@testing-library/react';
import { PlanGateAlerts } from './PlanAlertFields';

describe('PlanGateAlerts for a user who cannot see every server', () => {
  it('counts the alerts of servers the user cannot see, naming none of them', () => {
    // What was seen: those alerts were listed with their servers; filtered out
    // without a count, the preview said no alert fires while the gate would hold.
    render(
      <PlanGateAlerts
        alerts={{
          configured: true,
          known: true,
          holding: [],
          hiddenServers: 2,
          hiddenAlerts: 2,
          hidden: 'and 2 servers you cannot see',
        }}
      />,
    );
    const alert = screen.getByTestId('plan-gate-alerts');
    expect(alert).toHaveTextContent(
      '2 matching alerts fire now (on 2 servers you cannot see): the plan would wait',
    );
  });
});
