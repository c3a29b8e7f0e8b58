import Box from '@mui/material/Box';
import Checkbox from '@mui/material/Checkbox';
import FormControlLabel from '@mui/material/FormControlLabel';
import TextField from '@mui/material/TextField';
import type { ServerAction } from '@rackside/plugin-servers-common';

/** The actions that open a maintenance, which a healthy return may end (docs/alerts.md). */
export const MAINTENANCE_ACTIONS: readonly ServerAction[] = [
  'cordon',
  'drain',
  'reboot',
  'shutdown',
];

/** The opt-in as the dialog edits it (the seconds as typed). */
export interface HealthyReturnDraft {
  asked: boolean;
  seconds: string;
}

/**
 * The request's `healthyReturn`: undefined when not asked, 'invalid' when the seconds are
 * not a whole number from 0 to 3600 (the body's bounds: the backend would answer 400).
 */
export function healthyReturnRequest(
  draft: HealthyReturnDraft,
): { healthyForSeconds: number } | 'invalid' | undefined {
  if (!draft.asked) return undefined;
  const seconds = Number(draft.seconds);
  if (
    draft.seconds.trim() === '' ||
    !Number.isInteger(seconds) ||
    seconds < 0 ||
    seconds > 3600
  ) {
    return 'invalid';
  }
  return { healthyForSeconds: seconds };
}

/**
 * Opt-in, per request: the maintenance is Complete only once its server has been Ready this
 * long with none of its alerts firing (and its BMC not reporting Critical).
 */
export function HealthyReturnField(props: {
  value: HealthyReturnDraft;
  onChange(value: HealthyReturnDraft): void;
}) {
  const { value, onChange } = props;
  const invalid = healthyReturnRequest(value) === 'invalid';
  return (
    <Box mt={1}>
      <FormControlLabel
        control={
          <Checkbox
            checked={value.asked}
            onChange={e => onChange({ ...value, asked: e.target.checked })}
            inputProps={{ 'data-testid': 'action-healthy-return' } as object}
          />
        }
        label="Complete only once the server is back healthy (Ready, no alert firing)"
      />
      {value.asked && (
        <Box ml={4}>
          <TextField
            label="Ready for (seconds), with no alert firing"
            type="number"
            value={value.seconds}
            onChange={e => onChange({ ...value, seconds: e.target.value })}
            error={invalid}
            helperText={
              invalid
                ? 'A whole number of seconds from 0 to 3600'
                : 'Default 60'
            }
            size="small"
            inputProps={{
              min: 0,
              max: 3600,
              'data-testid': 'action-healthy-for-seconds',
            }}
          />
        </Box>
      )}
    </Box>
  );
}
