import Alert from '@mui/material/Alert';
import AlertTitle from '@mui/material/AlertTitle';
import Box from '@mui/material/Box';
import Chip from '@mui/material/Chip';
import Typography from '@mui/material/Typography';
import type {
  DrainEstimate,
  PreflightResponse,
} from '@rackside/plugin-servers-common';
import { durationText } from '../../ui/maintenanceText';
import { DetailItem, Section, WithChip } from './PreflightList';
import { disruptionsText, quorumNumbers } from './preflightText';

/** Each section below reads the one pre-flight it is given. */
type Props = { preflight: PreflightResponse };

/** Why the action cannot start as it is; nothing where it can. */
export function BlockersAlert({ preflight }: Props) {
  if (preflight.canProceed) return null;
  return (
    <Alert severity="warning" sx={{ my: 1 }} data-testid="preflight-blockers">
      <AlertTitle>This cannot start as it is</AlertTitle>
      <Box component="ul" m={0} pl={2}>
        {preflight.blockers.map(b => (
          <li key={b}>{b}</li>
        ))}
      </Box>
    </Alert>
  );
}

/** The expected duration, with the slowest pod named. */
export function EstimateLine(props: {
  estimate: DrainEstimate;
  evicted: number;
}) {
  const { estimate, evicted } = props;
  const waits = estimate.waitsForCompletion.length;
  const waitText =
    waits > 0
      ? ` It also waits for ${waits} pod${
          waits === 1 ? '' : 's'
        } to finish (wait-completed), however long that takes.`
      : '';
  return (
    <Box
      component="section"
      aria-labelledby="rackside-preflight-estimate"
      data-testid="preflight-estimate"
      data-seconds={estimate.seconds}
      mt={1}
    >
      <Typography
        variant="subtitle2"
        component="h3"
        id="rackside-preflight-estimate"
      >
        Expected duration
      </Typography>
      <Typography variant="body2">
        {evicted === 0
          ? `Nothing to evict, so no grace period to wait for.${waitText}`
          : `About ${durationText(
              estimate.seconds,
            )}, from the pods' grace periods: each order group takes as long as its slowest pod, one group after another. Disruption budgets can make it longer.${waitText}`}
      </Typography>
      {estimate.slowest && evicted > 0 && (
        <Typography variant="body2" data-testid="preflight-slowest">
          {`Slowest pod: ${estimate.slowest.pod} (grace period ${durationText(
            estimate.slowest.seconds,
          )}).`}
        </Typography>
      )}
    </Box>
  );
}

/** The disruption budgets over the evicted pods; those that block now stand out. */
export function BudgetsSection({ preflight }: Props) {
  const blocking = preflight.budgets.filter(b => b.blocksNow);
  return (
    <>
      <Section
        title="Disruption budgets"
        count={preflight.budgets.length}
        testId="preflight-budgets"
      >
        {preflight.budgets.map(b => (
          <DetailItem
            key={`${b.namespace}/${b.name}`}
            data={{ 'data-blocks-now': b.blocksNow }}
            primary={
              <WithChip
                text={`${b.namespace}/${b.name}: ${disruptionsText(b)}`}
                chip={
                  b.blocksNow && (
                    <Chip
                      size="small"
                      color="error"
                      label="blocks evictions now"
                    />
                  )
                }
              />
            }
            secondary={`covers ${b.pods.join(', ')}`}
            primaryTypographyProps={{
              component: 'div',
              color: b.blocksNow ? 'error.main' : undefined,
              fontWeight: b.blocksNow ? 'bold' : undefined,
            }}
          />
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
    </>
  );
}

/** The eviction order groups, where the pods have an order to show. */
export function OrderSection({ preflight }: Props) {
  const groups = preflight.orderGroups ?? [];
  // One group of order 0 is every drain without rules: no order to show.
  const ordered = groups.length > 1 || groups.some(g => g.order !== 0);
  if (!ordered) return null;
  const groupSeconds = new Map(
    (preflight.estimate?.groups ?? []).map(g => [g.order, g.seconds]),
  );
  return (
    <Section
      title="Eviction order (rackside.dev/drain-order)"
      count={groups.length}
      testId="preflight-order"
      note="Lower groups first; a group is evicted only once every pod of the group before it is gone."
      ordered
    >
      {groups.map((group, i) => (
        <DetailItem
          key={group.order}
          data={{ 'data-order': group.order }}
          primary={`${i + 1}. Order ${group.order}: ${group.pods.length} pod${
            group.pods.length === 1 ? '' : 's'
          }${
            groupSeconds.has(group.order)
              ? `, about ${durationText(groupSeconds.get(group.order)!)}`
              : ''
          }`}
          secondary={group.pods.join(', ')}
        />
      ))}
    </Section>
  );
}

/** What taking the node out does to the quorum of its control plane. */
export function QuorumSection({ preflight }: Props) {
  const numbers = quorumNumbers(preflight.quorum);
  return (
    <Box component="section" data-testid="preflight-quorum" mt={1}>
      <Typography variant="subtitle2" component="h3">
        Quorum
      </Typography>
      <Typography
        variant="body2"
        color={preflight.quorum.verdict === 'allow' ? undefined : 'error.main'}
      >
        {preflight.quorum.reason}
      </Typography>
      {numbers && (
        <Typography variant="body2" color="text.secondary">
          {numbers}
        </Typography>
      )}
    </Box>
  );
}
