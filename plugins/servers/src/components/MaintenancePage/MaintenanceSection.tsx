import type { ReactNode } from 'react';
import type { MaintenancePhase } from '@rackside/plugin-servers-common';
import { PageSection } from '../ui/PageSection';

/** The colour of a maintenance's phase chip (and of its timeline dot). */
export function phaseColor(
  phase: MaintenancePhase,
): 'default' | 'error' | 'success' | 'warning' | 'info' {
  switch (phase) {
    case 'Failed':
    case 'Refused':
      return 'error';
    case 'Drained':
    case 'Complete':
      return 'success';
    // AwaitingApproval: held until an approver decides, the colour of the Servers page's chip.
    case 'PoweredOff':
    case 'Rebooting':
    case 'AwaitingApproval':
      return 'warning';
    default:
      return 'info';
  }
}

/** One titled section of the maintenance page, named by its heading. */
export function Section(props: {
  title: string;
  testId: string;
  children: ReactNode;
}) {
  return (
    <PageSection
      title={props.title}
      headingId={`rackside-maintenance-${props.testId}`}
      testId={props.testId}
    >
      {props.children}
    </PageSection>
  );
}
