import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import TextField from '@mui/material/TextField';
import {
  HAZARD_TITLE,
  type PlanPreflightResponse,
} from '@rackside/plugin-servers-common';

/** The nodes whose step is at the hazard rung of a plan pre-flight. */
export function hazardNodesOf(preflight?: PlanPreflightResponse): string[] {
  return (preflight?.nodes ?? [])
    .filter(n => n.ceremony.level === 'hazard')
    .map(n => n.node);
}

/** Whether every hazard node's name was typed exactly. */
export function hazardNamesTyped(
  hazard: readonly string[],
  typed: Record<string, string>,
): boolean {
  return hazard.every(node => (typed[node] ?? '').trim() === node);
}

/**
 * The hazard ceremony of each step that consumes the last quorum margin: as for a
 * single hazard reboot, that node's name typed out (the reason is typed above).
 */
export function HazardStepNames(props: {
  hazard: readonly string[];
  typed: Record<string, string>;
  onChange: (typed: Record<string, string>) => void;
}) {
  const { hazard, typed, onChange } = props;
  if (hazard.length === 0) return null;
  return (
    <Alert severity="warning" sx={{ mt: 2 }} data-testid="plan-hazard">
      <AlertTitle>{HAZARD_TITLE}</AlertTitle>
      Each of these steps spends the last of the quorum margin. Type your reason
      yourself, and type each node&apos;s name to confirm it.
      {hazard.map(node => {
        const value = typed[node] ?? '';
        const wrong = value !== '' && value.trim() !== node;
        return (
          <TextField
            key={node}
            label={`Type ${node} to confirm its step`}
            value={value}
            onChange={e => onChange({ ...typed, [node]: e.target.value })}
            required
            fullWidth
            autoComplete="off"
            error={wrong}
            helperText={wrong ? `That is not ${node}.` : undefined}
            inputProps={{ 'data-testid': `plan-typed-name-${node}` }}
            sx={{ mt: 2 }}
          />
        );
      })}
    </Alert>
  );
}
