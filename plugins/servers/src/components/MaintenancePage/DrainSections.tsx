import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import LinearProgress from '@mui/material/LinearProgress';
import List from '@mui/material/List';
import ListItem from '@mui/material/ListItem';
import ListItemText from '@mui/material/ListItemText';
import Typography from '@mui/material/Typography';
import type {
  MaintenanceProgress,
  MaintenanceResponse,
} from '@rackside/plugin-servers-common';
import { drainOptionsText, formatTime } from '../ui/maintenanceText';
import { Section } from './MaintenanceSection';

export function DrainProgress(props: { progress: MaintenanceProgress }) {
  const p = props.progress;
  const percent = p.total > 0 ? Math.round((100 * p.evicted) / p.total) : 100;
  const blockedBy = p.blockedBy ?? [];
  const pendingPods = p.pendingPods ?? [];
  return (
    <Section title="Drain progress" testId="maintenance-progress">
      <Typography variant="body1" data-testid="maintenance-progress-text">
        {`${p.evicted} of ${p.total} pods evicted, ${p.pending} pending`}
      </Typography>
      <LinearProgress
        variant="determinate"
        value={percent}
        aria-label="drain progress"
        sx={{ my: 1 }}
      />
      {p.startedAt && (
        <Typography variant="body2" color="text.secondary">
          {`Started ${formatTime(p.startedAt)}`}
        </Typography>
      )}
      {blockedBy.length > 0 && (
        <Box mt={2} data-testid="maintenance-blocked-by">
          <Typography variant="subtitle2" component="h3" color="error.main">
            {`Blocked by disruption budgets (${blockedBy.length})`}
          </Typography>
          <List dense disablePadding>
            {blockedBy.map(b => (
              <ListItem key={`${b.pod}/${b.pdb}`} disableGutters>
                <ListItemText
                  primary={`${b.pod} → ${b.pdb}`}
                  secondary={b.message}
                />
              </ListItem>
            ))}
          </List>
        </Box>
      )}
      {pendingPods.length > 0 && (
        <Box mt={2} data-testid="maintenance-pending">
          <Typography variant="subtitle2" component="h3">
            {`Pods still on the node (${pendingPods.length})`}
          </Typography>
          <Box
            component="ul"
            m={0}
            pl={3}
            sx={{ maxHeight: 240, overflowY: 'auto' }}
          >
            {pendingPods.map(pod => (
              <li key={pod}>
                <Typography variant="body2">{pod}</Typography>
              </li>
            ))}
          </Box>
        </Box>
      )}
      {p.lastError && (
        <Alert
          severity="error"
          sx={{ mt: 2 }}
          data-testid="maintenance-last-error"
        >
          <AlertTitle>Last error</AlertTitle>
          <Box component="span" sx={{ whiteSpace: 'pre-wrap' }}>
            {p.lastError}
          </Box>
        </Alert>
      )}
    </Section>
  );
}

/**
 * The drain options the maintenance was asked with (`spec.drain`), in words: each
 * option asked for and by whom, then the defaults of the rest ("Default drain: …").
 */
export function DrainOptions(props: { maintenance: MaintenanceResponse }) {
  const text = drainOptionsText(props.maintenance);
  if (!text) return null;
  return (
    <Section title="Drain options" testId="maintenance-drain-options">
      {text.asked.length > 0 && (
        <List dense disablePadding>
          {text.asked.map(({ option, text: words }) => (
            <ListItem
              key={option}
              disableGutters
              data-testid="maintenance-drain-option"
              data-option={option}
            >
              <ListItemText primary={words} />
            </ListItem>
          ))}
        </List>
      )}
      {text.defaults && (
        <Typography
          variant="body2"
          color={text.asked.length > 0 ? 'text.secondary' : undefined}
          data-testid="maintenance-drain-defaults"
        >
          {text.defaults}
        </Typography>
      )}
    </Section>
  );
}
