import Chip from '@mui/material/Chip';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import { type PlanResponse } from '@rackside/plugin-servers-common';
import { chipLabelSx } from '../ui/chips';
import { PageSection } from '../ui/PageSection';
import { AppLink, useServersLinks } from '../ui/links';
import { formatTime } from '../ui/maintenanceText';
import { planPhaseColor } from '../ui/planText';

type PlanStep = PlanResponse['nodes'][number];
/** A step's version before and after, as far as they are known. */
type VersionPair = { before?: string; after?: string };

/**
 * The version a plan changes, as its steps column shows it: an upgrade plan's Talos
 * version, a firmware plan's firmware version; undefined for a plan that installs nothing.
 */
function versionColumnOf(intent: PlanResponse['intent']):
  | {
      label: string;
      pair: (step: PlanStep) => VersionPair | undefined;
    }
  | undefined {
  if (intent === 'upgrade') {
    return { label: 'Talos', pair: step => step.talosVersion };
  }
  if (intent === 'firmware') {
    return { label: 'Firmware', pair: step => step.firmwareVersion };
  }
  return undefined;
}

/** "v1.11.3 → v1.12.0": a step's versions before and after, as far as they are known. */
export function stepVersionsText(pair: VersionPair | undefined): string {
  const { before, after } = pair ?? {};
  if (before === undefined && after === undefined) return '—';
  return `${before ?? '?'} → ${after ?? '…'}`;
}

/**
 * Each node's step, in the order the plan takes them, with its maintenance (and, in an
 * upgrade or firmware plan, the Talos or firmware version before and after).
 */
export function PlanSteps(props: { cluster: string; plan: PlanResponse }) {
  const { cluster, plan } = props;
  const links = useServersLinks();
  const versions = versionColumnOf(plan.intent);
  return (
    <PageSection
      title="Servers, in the order they go"
      headingId="rackside-plan-steps"
    >
      <Table
        size="small"
        aria-labelledby="rackside-plan-steps"
        data-testid="plan-steps"
      >
        <TableHead>
          <TableRow>
            <TableCell>Server</TableCell>
            <TableCell>Step</TableCell>
            {versions && <TableCell>{versions.label}</TableCell>}
            <TableCell>Maintenance</TableCell>
            <TableCell>Started</TableCell>
            <TableCell>Ended</TableCell>
            <TableCell>Note</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {plan.nodes.map(step => (
            <TableRow key={step.name} data-testid={`plan-step-${step.name}`}>
              <TableCell>
                {step.name}
                {step.controlPlane ? ' (control plane)' : ''}
              </TableCell>
              <TableCell>
                <Chip
                  size="small"
                  label={step.phase}
                  color={planPhaseColor(step.phase)}
                  sx={chipLabelSx(planPhaseColor(step.phase))}
                />
              </TableCell>
              {versions && (
                <TableCell data-testid={`plan-step-versions-${step.name}`}>
                  {stepVersionsText(versions.pair(step))}
                </TableCell>
              )}
              <TableCell>
                {step.maintenance && links.maintenance ? (
                  <AppLink to={links.maintenance(cluster, step.maintenance)}>
                    {step.maintenance}
                  </AppLink>
                ) : (
                  step.maintenance ?? 'not started'
                )}
              </TableCell>
              <TableCell>
                {step.startedAt ? formatTime(step.startedAt) : ''}
              </TableCell>
              <TableCell>
                {step.endedAt ? formatTime(step.endedAt) : ''}
              </TableCell>
              <TableCell>{step.message ?? ''}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
    </PageSection>
  );
}
