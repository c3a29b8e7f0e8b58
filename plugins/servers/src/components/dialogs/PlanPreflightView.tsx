import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Table from '@mui/material/Table';
import TableBody from '@mui/material/TableBody';
import TableCell from '@mui/material/TableCell';
import TableHead from '@mui/material/TableHead';
import TableRow from '@mui/material/TableRow';
import Typography from '@mui/material/Typography';
import type {
  PlanPreflightResponse,
  PlanPreflightStep,
} from '@rackside/plugin-servers-common';
import { durationText } from '../ui/maintenanceText';
import { quorumNumbers } from './preflight';

/** "Step 1: worker-1, worker-2 (about 2 min)": one step as a sentence. */
export function stepText(step: PlanPreflightStep): string {
  const who = step.controlPlane
    ? `${step.nodes.join(', ')} (control plane, alone)`
    : step.nodes.join(', ');
  return `Step ${step.index + 1}: ${who}, about ${durationText(
    step.estimateSeconds,
  )}`;
}

/** What the drain estimate leaves out, by intent. */
const ESTIMATE_NOTE: Partial<Record<PlanPreflightResponse['intent'], string>> =
  {
    reboot: ' (each reboot adds its machine’s boot time)',
    upgrade: ' (each upgrade adds its install and boot time)',
    firmware: ' (each update adds the BMC’s task and any reset)',
  };

/**
 * The readable plan pre-flight: the estimate, the servers already at an upgrade's target
 * (skipped), each step, each node, the budgets.
 */
export function PlanPreflightView(props: { preflight: PlanPreflightResponse }) {
  const p = props.preflight;
  return (
    <Box data-testid="plan-preflight">
      <Typography
        variant="body1"
        gutterBottom
        data-testid="plan-estimate-total"
      >
        {`${p.nodes.length} server${p.nodes.length === 1 ? '' : 's'} in ${
          p.steps.length
        } step${p.steps.length === 1 ? '' : 's'}, about ${durationText(
          p.estimate.seconds,
        )} of draining in all${ESTIMATE_NOTE[p.intent] ?? ''}.`}
      </Typography>
      {p.skipped && p.skipped.length > 0 && (
        <Alert severity="info" sx={{ mb: 2 }} data-testid="plan-skipped">
          <AlertTitle>{`Already there: ${p.skipped.length} skipped`}</AlertTitle>
          <Box component="ul" m={0} pl={2}>
            {p.skipped.map(s => (
              <li key={s.node} data-testid={`plan-skipped-${s.node}`}>
                {`${s.node}: ${s.reason}`}
              </li>
            ))}
          </Box>
          Nothing is asked of them: no step, no place among those at a time.
        </Alert>
      )}
      {p.blockers.length > 0 && (
        <Alert severity="error" sx={{ mb: 2 }} data-testid="plan-blockers">
          <AlertTitle>The plan cannot start as it is</AlertTitle>
          <Box component="ul" m={0} pl={2}>
            {p.blockers.map(b => (
              <li key={b}>{b}</li>
            ))}
          </Box>
        </Alert>
      )}
      <Typography variant="subtitle2" component="h3">
        Steps
      </Typography>
      <Box
        component="ol"
        m={0}
        mb={2}
        pl={3}
        data-testid="plan-preflight-steps"
      >
        {p.steps.map(step => {
          const numbers = quorumNumbers(step.quorum);
          return (
            <li key={step.index}>
              <Typography variant="body2">{stepText(step)}</Typography>
              {step.controlPlane && (
                <Typography variant="body2" color="text.secondary">
                  {`${step.quorum.reason}${numbers ? ` ${numbers}` : ''}`}
                </Typography>
              )}
            </li>
          );
        })}
      </Box>
      <Typography variant="subtitle2" component="h3" id="rackside-plan-nodes">
        Per server
      </Typography>
      <Table size="small" aria-labelledby="rackside-plan-nodes" sx={{ mb: 2 }}>
        <TableHead>
          <TableRow>
            <TableCell>Server</TableCell>
            <TableCell>Step</TableCell>
            <TableCell>Pods evicted</TableCell>
            <TableCell>Refused</TableCell>
            <TableCell>Budgets blocking now</TableCell>
            <TableCell>Drain estimate</TableCell>
          </TableRow>
        </TableHead>
        <TableBody>
          {p.nodes.map(n => (
            <TableRow
              key={n.node}
              data-testid={`plan-preflight-node-${n.node}`}
            >
              <TableCell>
                {n.node}
                {n.controlPlane ? ' (control plane)' : ''}
              </TableCell>
              <TableCell>{n.step + 1}</TableCell>
              <TableCell>{n.evict.length}</TableCell>
              <TableCell>{n.refused.length}</TableCell>
              <TableCell>
                {n.budgets
                  .filter(b => b.blocksNow)
                  .map(b => `${b.namespace}/${b.name}`)
                  .join(', ') || 'none'}
              </TableCell>
              <TableCell>{durationText(n.estimate?.seconds ?? 0)}</TableCell>
            </TableRow>
          ))}
        </TableBody>
      </Table>
      {p.budgets.length > 0 && (
        <>
          <Typography variant="subtitle2" component="h3">
            Disruption budgets over these servers’ pods
          </Typography>
          <Box component="ul" m={0} mb={2} pl={3}>
            {p.budgets.map(b => (
              <li key={`${b.namespace}/${b.name}`}>
                <Typography variant="body2">
                  {`${b.namespace}/${b.name}: ${
                    b.blocksNow
                      ? 'blocks evictions now; the plan waits until it is healthy'
                      : `allows ${b.disruptionsAllowed} disruption${
                          b.disruptionsAllowed === 1 ? '' : 's'
                        }`
                  }`}
                </Typography>
              </li>
            ))}
          </Box>
        </>
      )}
    </Box>
  );
}
