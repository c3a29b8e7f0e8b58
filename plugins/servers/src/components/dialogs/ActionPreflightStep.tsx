import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Button from '@mui/material/Button';
import Checkbox from '@mui/material/Checkbox';
import FormControlLabel from '@mui/material/FormControlLabel';
import FormHelperText from '@mui/material/FormHelperText';
import LinearProgress from '@mui/material/LinearProgress';
import { describeError } from '../../api';
import { nodeLocalPods, PreflightView } from './preflight';
import type { PreflightState } from '../hooks/usePreflight';
import { ACKNOWLEDGEMENT, DRAIN_OPTIONS, IMPACT_CHANGED } from './ceremonyText';

/** The id of a drain option's warning, which describes its checkbox. */
function optionWarningId(option: string): string {
  return `rackside-drain-option-${option}-warning`;
}

/** The pre-flight part of the dialog: the impact, the options, the acknowledgement. */
export function PreflightStep(props: {
  state: PreflightState;
  /** Drain options this action does not take (an upgrade's `force` is Talos's). */
  hiddenOptions?: readonly string[];
}) {
  const { state, hiddenOptions = [] } = props;
  const { preflight, options } = state;
  // The options matter only when something is refused, or once one is on;
  // the node-local one only where the pre-flight lists node-local data.
  const showOptions =
    !!preflight &&
    (preflight.refused.length > 0 ||
      options.deleteEmptyDirData ||
      options.force ||
      options.allowNodeLocalData);
  const shownOptions = DRAIN_OPTIONS.filter(
    o =>
      !hiddenOptions.includes(o.option) &&
      (o.option !== 'allowNodeLocalData' ||
        options.allowNodeLocalData ||
        (!!preflight && nodeLocalPods(preflight).length > 0)),
  );
  return (
    <Box mb={2} data-testid="preflight-step">
      {state.loading && (
        <LinearProgress aria-label="taking the pre-flight" sx={{ mb: 1 }} />
      )}
      {state.error !== undefined && !state.loading && (
        <Alert
          severity="error"
          sx={{ mb: 1 }}
          data-testid="preflight-error"
          action={
            <Button color="inherit" size="small" onClick={state.retry}>
              Try again
            </Button>
          }
        >
          {`Could not take the pre-flight: ${
            describeError(state.error).message
          }`}
        </Alert>
      )}
      {state.changed && preflight && (
        <Alert
          severity="warning"
          sx={{ mb: 1 }}
          data-testid="preflight-changed"
        >
          <AlertTitle>{IMPACT_CHANGED}</AlertTitle>
          This is the impact now. Review it and acknowledge it again.
        </Alert>
      )}
      {preflight && <PreflightView preflight={preflight} />}
      {showOptions && (
        <Box mt={1} data-testid="preflight-options">
          {shownOptions.map(o => (
            <Box key={o.option}>
              <FormControlLabel
                control={
                  <Checkbox
                    checked={options[o.option]}
                    disabled={state.loading}
                    onChange={e => state.setOption(o.option, e.target.checked)}
                    inputProps={{
                      'aria-describedby': optionWarningId(o.option),
                    }}
                  />
                }
                label={o.label}
              />
              <FormHelperText
                id={optionWarningId(o.option)}
                sx={{ mt: -1, ml: 4 }}
                error
              >
                {o.warning}
              </FormHelperText>
            </Box>
          ))}
        </Box>
      )}
      {preflight && (
        <FormControlLabel
          sx={{ mt: 1 }}
          control={
            <Checkbox
              checked={state.acknowledged}
              disabled={state.loading || !preflight.canProceed}
              onChange={e => state.setAcknowledged(e.target.checked)}
              inputProps={
                { 'data-testid': 'preflight-ack' } as Record<string, string>
              }
            />
          }
          label={ACKNOWLEDGEMENT}
        />
      )}
    </Box>
  );
}
