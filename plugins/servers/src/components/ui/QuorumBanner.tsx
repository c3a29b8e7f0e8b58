import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import {
  quorumNumbersText,
  type QuorumSummaryResponse,
} from '@rackside/plugin-servers-common';

/** The text of the quorum banner, shared by the banner and its tests. */
export function quorumText(quorum: QuorumSummaryResponse): string {
  if (!quorum.derived) {
    // A hidden quorum is derived, just not for this user's eyes: don't call it underivable.
    return quorum.hidden
      ? `Quorum is not shown: ${quorum.reason}`
      : `Quorum cannot be derived: ${quorum.reason}`;
  }
  const goingDown = quorum.goingDown.length
    ? `; going down: ${quorum.goingDown.join(', ')}`
    : '';
  return `${quorumNumbersText(quorum)}${goingDown}`;
}

/** Members, quorum and margin of a cluster's control plane, or why they are unknown. */
export function QuorumBanner(props: {
  cluster: string;
  quorum: QuorumSummaryResponse;
}) {
  const { quorum } = props;
  let severity: 'success' | 'info' | 'warning' | 'error' = 'info';
  if (!quorum.derived) severity = quorum.hidden ? 'info' : 'warning';
  else if (quorum.margin < 0) severity = 'error';
  else if (quorum.margin === 0) severity = 'warning';
  else severity = 'success';
  return (
    <Alert
      severity={severity}
      data-testid={`quorum-banner-${props.cluster}`}
      sx={{ mb: 1 }}
    >
      <AlertTitle>Control-plane quorum</AlertTitle>
      {quorumText(quorum)}
    </Alert>
  );
}
