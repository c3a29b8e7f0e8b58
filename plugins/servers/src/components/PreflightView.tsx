import type { ReactNode } from 'react';
import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Chip from '@mui/material/Chip';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText from '@mui/material/ListItemText';
import Typography from '@mui/material/Typography';
import {
  podKey,
  type DrainBudget,
  type DrainPod,
  type PreflightQuorumEffect,
  type PreflightResponse,
} from '@rackside/plugin-servers-common';

/** What a person reads about one pod: its controller, grace period, state. */
export function podDetails(pod: DrainPod): string {
  const parts = [
    pod.controller ? `owned by ${pod.controller}` : 'no controller',
  ];
  if (pod.gracePeriodSeconds !== undefined) {
    parts.push(`grace period ${pod.gracePeriodSeconds} s`);
  }
  if (pod.terminating) parts.push('already terminating');
  return parts.join(' · ');
}

/** "allows 1 disruption", "allows 0 disruptions". */
export function disruptionsText(budget: DrainBudget): string {
  const n = budget.disruptionsAllowed;
  return `allows ${n} disruption${n === 1 ? '' : 's'}`;
}

/** The numbers behind the quorum sentence, when the guard could derive them. */
export function quorumNumbers(q: PreflightQuorumEffect): string | undefined {
  if (q.members === null) return undefined;
  const after =
    q.marginAfter !== null && q.marginAfter !== q.margin
      ? `, margin afterwards ${q.marginAfter}`
      : '';
  return `Members ${q.members}, quorum ${q.quorum ?? '?'}, ready ${
    q.ready ?? '?'
  }, margin ${q.margin ?? '?'}${after}.`;
}

function Section(props: {
  title: string;
  count: number;
  testId: string;
  empty?: string;
  children?: ReactNode;
}) {
  const { title, count, testId, empty, children } = props;
  const headingId = `rackside-preflight-${testId}`;
  if (count === 0 && !empty) return null;
  return (
    <Box component="section" aria-labelledby={headingId} data-testid={testId}>
      <Typography variant="subtitle2" component="h3" id={headingId} mt={1}>
        {`${title} (${count})`}
      </Typography>
      {count === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {empty}
        </Typography>
      ) : (
        <List dense disablePadding sx={{ maxHeight: 180, overflowY: 'auto' }}>
          {children}
        </List>
      )}
    </Box>
  );
}

function PodItem(props: { pod: DrainPod }) {
  const { pod } = props;
  return (
    <ListItem disableGutters sx={{ py: 0 }}>
      <ListItemText primary={podKey(pod)} secondary={podDetails(pod)} />
    </ListItem>
  );
}

/**
 * A pre-flight as a person reads it: the pods a drain evicts, the pods it
 * refuses and why, what it leaves in place, the disruption budgets in the way
 * (those that block now stand out), and the quorum effect. Shared by the
 * drain, reboot and shutdown dialogs.
 */
export function PreflightView(props: { preflight: PreflightResponse }) {
  const { preflight } = props;
  const blocking = preflight.budgets.filter(b => b.blocksNow);
  return (
    <Box data-testid="preflight" data-token={preflight.token}>
      <Typography variant="caption" color="text.secondary" component="p">
        {`Impact on ${preflight.node} as of ${new Date(
          preflight.takenAt,
        ).toLocaleString()}.`}
      </Typography>

      {!preflight.canProceed && (
        <Alert
          severity="warning"
          sx={{ my: 1 }}
          data-testid="preflight-blockers"
        >
          <AlertTitle>This cannot start as it is</AlertTitle>
          <Box component="ul" m={0} pl={2}>
            {preflight.blockers.map(b => (
              <li key={b}>{b}</li>
            ))}
          </Box>
        </Alert>
      )}

      <Section
        title="Pods to evict"
        count={preflight.evict.length}
        testId="preflight-evict"
        empty="No pod needs to be evicted."
      >
        {preflight.evict.map(pod => (
          <PodItem key={podKey(pod)} pod={pod} />
        ))}
      </Section>

      <Section
        title="Pods refused"
        count={preflight.refused.length}
        testId="preflight-refused"
      >
        {preflight.refused.map(r => (
          <ListItem key={podKey(r.pod)} disableGutters sx={{ py: 0 }}>
            <ListItemText
              primary={podKey(r.pod)}
              secondary={r.message}
              primaryTypographyProps={{ color: 'error.main' }}
            />
          </ListItem>
        ))}
      </Section>

      <Section
        title="Disruption budgets"
        count={preflight.budgets.length}
        testId="preflight-budgets"
      >
        {preflight.budgets.map(b => (
          <ListItem
            key={`${b.namespace}/${b.name}`}
            disableGutters
            sx={{ py: 0 }}
            data-blocks-now={b.blocksNow}
          >
            <ListItemText
              primary={
                <Box display="flex" alignItems="center" gap={1}>
                  <span>{`${b.namespace}/${b.name}: ${disruptionsText(
                    b,
                  )}`}</span>
                  {b.blocksNow && (
                    <Chip
                      size="small"
                      color="error"
                      label="blocks evictions now"
                    />
                  )}
                </Box>
              }
              secondary={`covers ${b.pods.join(', ')}`}
              primaryTypographyProps={{
                component: 'div',
                color: b.blocksNow ? 'error.main' : undefined,
                fontWeight: b.blocksNow ? 'bold' : undefined,
              }}
            />
          </ListItem>
        ))}
      </Section>
      {blocking.length > 0 && (
        <Typography
          variant="body2"
          color="error.main"
          data-testid="preflight-blocking"
        >
          {`Evictions covered by ${blocking
            .map(b => b.name)
            .join(
              ', ',
            )} are refused until the budget allows a disruption; the drain waits and retries.`}
        </Typography>
      )}

      <Section
        title="DaemonSet pods left in place"
        count={preflight.daemonSet.length}
        testId="preflight-daemonset"
      >
        {preflight.daemonSet.map(pod => (
          <PodItem key={podKey(pod)} pod={pod} />
        ))}
      </Section>

      <Section
        title="Static pods left in place"
        count={preflight.mirror.length}
        testId="preflight-mirror"
      >
        {preflight.mirror.map(pod => (
          <PodItem key={podKey(pod)} pod={pod} />
        ))}
      </Section>

      <Section
        title="Finished pods (nothing to evict)"
        count={preflight.finished.length}
        testId="preflight-finished"
      >
        {preflight.finished.map(pod => (
          <PodItem key={podKey(pod)} pod={pod} />
        ))}
      </Section>

      <Box component="section" data-testid="preflight-quorum" mt={1}>
        <Typography variant="subtitle2" component="h3">
          Quorum
        </Typography>
        <Typography
          variant="body2"
          color={
            preflight.quorum.verdict === 'allow' ? undefined : 'error.main'
          }
        >
          {preflight.quorum.reason}
        </Typography>
        {quorumNumbers(preflight.quorum) && (
          <Typography variant="body2" color="text.secondary">
            {quorumNumbers(preflight.quorum)}
          </Typography>
        )}
      </Box>
    </Box>
  );
}
