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
    case 'PoweredOff':
    case 'Rebooting':
    // Held until an approver decides: the Servers page's chip has the same colour.
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
