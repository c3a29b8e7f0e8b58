import TextField from '@mui/material/TextField';

/** The hint shown under the reason field; the backend's 400 replaces it. */
export const REASON_HINT =
  "Why, in your own words (a ticket reference helps). The deployment's reason policy applies.";

/**
 * The reason every request carries (it is audited and checked against the
 * deployment's reason policy): required, a few lines. `error` is the backend's
 * 400 about the reason and takes the place of the hint.
 */
export function ReasonField(props: {
  value: string;
  onChange(value: string): void;
  error?: string;
  hint?: string;
  testId: string;
  autoComplete?: string;
}) {
  return (
    <TextField
      label="Reason"
      value={props.value}
      onChange={e => props.onChange(e.target.value)}
      required
      fullWidth
      multiline
      minRows={2}
      error={!!props.error}
      helperText={props.error ?? props.hint ?? REASON_HINT}
      autoComplete={props.autoComplete}
      inputProps={{ 'data-testid': props.testId }}
      sx={{ mb: 2 }}
    />
  );
}
