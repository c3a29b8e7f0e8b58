import TextField from '@mui/material/TextField';

/** Helper-text props that announce a change (an error replacing the hint). */
export const LIVE_HELPER_TEXT = {
  'aria-live': 'polite',
} as const;

/** The hint shown under the reason field; the backend's 400 replaces it. */
export const REASON_HINT =
  "Why, in your own words (a ticket reference helps). The deployment's reason policy applies.";

/**
 * The reason every request carries (it is audited and checked against the
 * deployment's reason policy): required, a few lines. `error` is the backend's
 * 400 about the reason and takes the place of the hint; the helper text is a
 * polite live region (and the field's aria-describedby, MUI wires that), so a
 * screen reader hears the error when it arrives and again on the field.
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
      FormHelperTextProps={LIVE_HELPER_TEXT}
      autoComplete={props.autoComplete}
      inputProps={{ 'data-testid': props.testId }}
      sx={{ mb: 2 }}
    />
  );
}
