import { useApi } from '@backstage/frontend-plugin-api';
import Box from '@mui/material/Box';
import Chip from '@mui/material/Chip';
import Typography from '@mui/material/Typography';
import {
  isTerminalPlanPhase,
  PLAN_LIST_MAX_LIMIT,
} from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import { chipLabelSx } from '../ui/chips';
import { AppLink, useServersLinks } from '../ui/links';
import { formatTime } from '../ui/maintenanceText';
import { useLiveRefresh } from '../hooks/useLiveRefresh';
import { useLoader } from '../hooks/useLoader';
import { planPhaseColor, planProgressText } from '../ui/planText';

/** How many finished plans the Servers page lists below the open ones. */
const FINISHED_SHOWN = 5;

/**
 * The maintenance plans of a cluster on the Servers page: the open ones, then the last
 * few finished, each linking to its page. Nothing at all while the cluster has none
 * (or the backend serves no plans).
 */
export function ClusterPlans(props: { cluster: string }) {
  const { cluster } = props;
  const api = useApi(serversApiRef);
  const links = useServersLinks();
  const loaded = useLoader(
    () =>
      Promise.all([
        api.listPlans(cluster, { state: 'open', limit: PLAN_LIST_MAX_LIMIT }),
        api.listPlans(cluster, { state: 'finished', limit: FINISHED_SHOWN }),
      ]).catch(() => undefined),
    [api, cluster],
  );
  useLiveRefresh(cluster, loaded.reload);
  if (!loaded.value) return null;
  const [openPage, finishedPage] = loaded.value;
  const open = openPage.items.filter(p => !isTerminalPlanPhase(p.phase));
  const finished = finishedPage.items.filter(p => isTerminalPlanPhase(p.phase));
  if (open.length + finished.length === 0) return null;
  const headingId = `rackside-plans-${cluster}`;
  return (
    <Box
      component="section"
      aria-labelledby={headingId}
      mb={2}
      data-testid={`cluster-plans-${cluster}`}
    >
      <Typography variant="subtitle1" component="h3" id={headingId}>
        Maintenance plans
      </Typography>
      <Box component="ul" m={0} pl={3}>
        {[...open, ...finished].map(plan => {
          const color = planPhaseColor(plan.phase);
          return (
            <li key={plan.name}>
              <Typography variant="body2" component="span">
                {links.plan ? (
                  <AppLink to={links.plan(cluster, plan.name)}>
                    {plan.name}
                  </AppLink>
                ) : (
                  plan.name
                )}
                {` rolling ${plan.intent}, ${planProgressText(plan)}`}
                {plan.createdAt
                  ? `, requested ${formatTime(plan.createdAt)}`
                  : ''}{' '}
              </Typography>
              <Chip
                size="small"
                label={plan.phase}
                color={color}
                sx={chipLabelSx(color)}
              />
            </li>
          );
        })}
      </Box>
    </Box>
  );
}
