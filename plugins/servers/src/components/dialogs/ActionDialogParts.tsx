import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import DialogTitle from '@mui/material/DialogTitle';
import TextField from '@mui/material/TextField';
import WarningIcon from '@mui/icons-material/Warning';
import {
  quorumNumbersSentence,
  type PreflightResponse,
  type QuorumSummaryResponse,
} from '@rackside/plugin-servers-common';
import type { DescribedError } from '../../api';
import { quorumNumbers } from './preflight';
import { quorumText } from '../ui/QuorumBanner';
import { LIVE_HELPER_TEXT } from './ReasonField';
import { NOTHING_CHANGED } from './ceremonyText';

/**
 * The refusal in words: the guard's own sentence and numbers from the
 * pre-flight when there is one, else the cluster's quorum as last read.
 */
export function refusalOf(
  cluster: string,
  preflight: PreflightResponse | undefined,
  quorum: QuorumSummaryResponse | undefined,
): { sentence: string; numbers?: string } {
  if (preflight && preflight.ceremony.level === 'refused') {
    return {
      sentence: preflight.quorum.reason,
      numbers: quorumNumbers(preflight.quorum),
    };
  }
  const sentence = `This would drop the ready control-plane members of ${cluster} below quorum, so Rackside refuses it.`;
  if (!quorum) return { sentence };
  return {
    sentence,
    numbers: quorum.derived
      ? quorumNumbersSentence({
          members: quorum.members,
          quorum: quorum.quorum,
          margin: quorum.margin,
        })
      : quorumText(quorum),
  };
}

/** Why the action is refused, in the guard's words, and that no ceremony can allow it. */
export function RefusalAlert(props: {
  refusal: { sentence: string; numbers?: string };
}) {
  const { refusal } = props;
  return (
    <Alert severity="error" sx={{ mb: 2 }} data-testid="action-refused">
      <AlertTitle>Refused</AlertTitle>
      {refusal.sentence}
      {refusal.numbers && (
        <Box component="div" mt={1} data-testid="action-refused-numbers">
          {refusal.numbers}
        </Box>
      )}
      <Box component="div" mt={1}>
        No ceremony can allow it.
      </Box>
    </Alert>
  );
}

/** The node's name typed out, where the ceremony asks for it. */
export function TypedNameField(props: {
  node: string;
  value: string;
  onChange(value: string): void;
}) {
  const { node, value: typedName } = props;
  const typedNameWrong = typedName.length > 0 && typedName !== node;
  return (
    <TextField
      label={`Type ${node} to confirm`}
      value={typedName}
      onChange={e => props.onChange(e.target.value)}
      required
      fullWidth
      autoComplete="off"
      error={typedNameWrong}
      helperText={
        typedNameWrong
          ? `That is not ${node}: type the node name exactly.`
          : `The name of the node this acts on, typed out.`
      }
      FormHelperTextProps={LIVE_HELPER_TEXT}
      inputProps={{ 'data-testid': 'action-typed-name' }}
      sx={{ mb: 2 }}
    />
  );
}

/** What the backend answered instead of doing the action (a 409 says nothing changed). */
export function ActionErrorAlert(props: { error: DescribedError }) {
  const { error } = props;
  return (
    <Alert severity="error" role="alert" data-testid="action-error">
      {error.status === 409 && <AlertTitle>Refused</AlertTitle>}
      {error.message}
      {error.quorum && quorumNumbersSentence(error.quorum) && (
        <Box component="div" mt={1}>
          {quorumNumbersSentence(error.quorum)}
        </Box>
      )}
      {error.status === 409 && (
        <Box component="div" mt={1}>
          {NOTHING_CHANGED}
        </Box>
      )}
    </Alert>
  );
}

/** The dialog's title; above the hazard rung it leads with the warning and its title. */
export function ActionDialogTitle(props: {
  id: string;
  /** Set at the hazard rung: the ceremony's title for the hazard. */
  hazardTitle?: string;
  text: string;
}) {
  const { id, hazardTitle, text } = props;
  return (
    <DialogTitle id={id}>
      {hazardTitle !== undefined ? (
        <Box display="flex" alignItems="center" gap={1} color="error.main">
          <WarningIcon titleAccess="warning" />
          <span>{hazardTitle}</span>
        </Box>
      ) : null}
      {text}
    </DialogTitle>
  );
}

/** What the hazard rung asks, said before the fields. */
export function HazardAlert() {
  return (
    <Alert severity="error" sx={{ mb: 2 }}>
      This takes the cluster to the edge of quorum. Type the node name and write
      the reason yourself.
    </Alert>
  );
}
