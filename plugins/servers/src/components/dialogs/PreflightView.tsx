import { useLayoutEffect, useRef, useState, type ReactNode } from 'react';
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
  quorumNumbersSentence,
  type DrainBudget,
  type DrainEstimate,
  type DrainPod,
  type DrainStatefulSet,
  type DrainVirtualMachine,
  type VirtualMachineDrainAction,
  type PreflightQuorumEffect,
  type PreflightResponse,
} from '@rackside/plugin-servers-common';
import { chipLabelSx } from '../shared/chips';
import { durationText } from '../shared/maintenanceText';

/**
 * The pre-flight's list items wrap: the Backstage theme cuts dense list text
 * to one line with an ellipsis, which would hide the end of a reason (why a
 * pod is refused, why a virtual machine blocks the drain).
 */
const WRAP_SX = {
  whiteSpace: 'normal',
  overflow: 'visible',
  overflowWrap: 'anywhere',
} as const;

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
export function disruptionsText(
  budget: Pick<DrainBudget, 'disruptionsAllowed'>,
): string {
  const n = budget.disruptionsAllowed;
  return `allows ${n} disruption${n === 1 ? '' : 's'}`;
}

/** A pod with data on the node, and whether this pre-flight lets the drain evict it. */
export interface NodeLocalPod {
  pod: DrainPod;
  /** The option is on: it is evicted, and is unavailable until the node is back. */
  allowed: boolean;
}

/**
 * The pods with data on the node (section 16): refused ones (cause
 * `nodeLocalData`) and, once allowNodeLocalData is on, the ones the drain
 * evicts anyway. Empty when the node holds no such data.
 */
export function nodeLocalPods(preflight: PreflightResponse): NodeLocalPod[] {
  const refused = preflight.refused
    .filter(r => r.causes.includes('nodeLocalData'))
    .map(r => ({ pod: r.pod, allowed: false }));
  const allowed = (preflight.nodeLocal ?? []).map(pod => ({
    pod,
    allowed: true,
  }));
  return [...refused, ...allowed].sort((a, b) =>
    podKey(a.pod).localeCompare(podKey(b.pod)),
  );
}

/** What a drain does to a virtual machine, as its chip says it. */
export const VM_ACTION_LABELS: Record<VirtualMachineDrainAction, string> = {
  migrate: 'live-migrated',
  shutdown: 'shut down',
  blocks: 'blocks the drain',
};

const VM_ACTION_COLORS = {
  migrate: 'success',
  shutdown: 'warning',
  blocks: 'error',
} as const;

/** How many virtual machines each action takes: "1 live-migrated, 2 shut down". */
export function virtualMachinesSummary(
  vms: readonly DrainVirtualMachine[],
): string {
  return (['migrate', 'shutdown', 'blocks'] as const)
    .map(
      action => [action, vms.filter(v => v.action === action).length] as const,
    )
    .filter(([, n]) => n > 0)
    .map(([action, n]) => `${n} ${VM_ACTION_LABELS[action]}`)
    .join(', ');
}

/** The budgets over a StatefulSet's pods, in words. */
export function statefulSetBudgetText(set: DrainStatefulSet): string {
  if (set.budgets.length === 0) {
    return 'no disruption budget covers these pods';
  }
  return set.budgets
    .map(
      b =>
        `budget ${b.name} ${disruptionsText(b)}${
          b.blocksNow ? ' (blocks evictions now)' : ''
        }`,
    )
    .join('; ');
}

/** The numbers behind the quorum sentence, when the guard could derive them. */
export function quorumNumbers(q: PreflightQuorumEffect): string | undefined {
  return q.members === null ? undefined : quorumNumbersSentence(q);
}

/**
 * A list of at most 180 px that scrolls beyond. While it does, it takes the
 * keyboard focus (named by its heading), so that the arrow keys can scroll it
 * without a pointer (axe scrollable-region-focusable); a list that fits is
 * no tab stop.
 */
function ScrollingList(props: {
  ordered?: boolean;
  labelledBy: string;
  children?: ReactNode;
}) {
  const { ordered, labelledBy, children } = props;
  const ref = useRef<HTMLUListElement>(null);
  const [scrolls, setScrolls] = useState(false);
  useLayoutEffect(() => {
    const el = ref.current;
    if (!el) return undefined;
    const check = () => setScrolls(el.scrollHeight > el.clientHeight + 1);
    check();
    // Wrapped text grows and shrinks with the dialog's width.
    if (typeof ResizeObserver === 'undefined') return undefined;
    const observer = new ResizeObserver(check);
    observer.observe(el);
    return () => observer.disconnect();
  }, [children]);
  return (
    <List
      ref={ref}
      dense
      disablePadding
      component={ordered ? 'ol' : 'ul'}
      sx={{ maxHeight: 180, overflowY: 'auto' }}
      tabIndex={scrolls ? 0 : undefined}
      aria-labelledby={scrolls ? labelledBy : undefined}
    >
      {children}
    </List>
  );
}

function Section(props: {
  title: string;
  count: number;
  testId: string;
  empty?: string;
  /** A sentence under the heading: what the drain does with this class. */
  note?: string;
  /** The items come in an order that matters (`ol`). */
  ordered?: boolean;
  children?: ReactNode;
}) {
  const { title, count, testId, empty, note, ordered, children } = props;
  const headingId = `rackside-preflight-${testId}`;
  if (count === 0 && !empty) return null;
  return (
    <Box component="section" aria-labelledby={headingId} data-testid={testId}>
      <Typography variant="subtitle2" component="h3" id={headingId} mt={1}>
        {`${title} (${count})`}
      </Typography>
      {note && count > 0 && (
        <Typography variant="body2" color="text.secondary">
          {note}
        </Typography>
      )}
      {count === 0 ? (
        <Typography variant="body2" color="text.secondary">
          {empty}
        </Typography>
      ) : (
        <ScrollingList ordered={ordered} labelledBy={headingId}>
          {children}
        </ScrollingList>
      )}
    </Box>
  );
}

function PodItem(props: { pod: DrainPod }) {
  const { pod } = props;
  return (
    <ListItem disableGutters sx={{ py: 0 }}>
      <ListItemText
        sx={WRAP_SX}
        primary={podKey(pod)}
        secondary={podDetails(pod)}
      />
    </ListItem>
  );
}

/** The expected duration, with the slowest pod named. */
function EstimateLine(props: { estimate: DrainEstimate; evicted: number }) {
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

/**
 * A pre-flight as a person reads it: the expected duration and the slowest
 * pod, the pods a drain evicts, the pods with data on the node, the pods it
 * refuses and why, the StatefulSets and the disruption budgets in the way
 * (those that block now stand out), the eviction order groups, what it waits
 * for and what it leaves in place, the KubeVirt virtual machines on the node
 * and what happens to each, and the quorum effect (DESIGN sections 4 and 16).
 * Shared by the drain, reboot and shutdown dialogs.
 */
export function PreflightView(props: { preflight: PreflightResponse }) {
  const { preflight } = props;
  const blocking = preflight.budgets.filter(b => b.blocksNow);
  const nodeLocal = nodeLocalPods(preflight);
  const statefulSets = preflight.statefulSets ?? [];
  const skipped = preflight.skipped ?? [];
  const waitCompleted = preflight.waitCompleted ?? [];
  const groups = preflight.orderGroups ?? [];
  // Absent where the cluster has no KubeVirt API: then there is no section at all.
  const virtualMachines = preflight.virtualMachines;
  // One group of order 0 is every drain without rules: no order to show.
  const ordered = groups.length > 1 || groups.some(g => g.order !== 0);
  const groupSeconds = new Map(
    (preflight.estimate?.groups ?? []).map(g => [g.order, g.seconds]),
  );
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

      {preflight.estimate && (
        <EstimateLine
          estimate={preflight.estimate}
          evicted={preflight.evict.length}
        />
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
        title="Pods with data on this node"
        count={nodeLocal.length}
        testId="preflight-node-local"
        note={`A pod whose data is on ${preflight.node} cannot run anywhere else until ${preflight.node} is back. The drain refuses such pods unless you allow it on purpose.`}
      >
        {nodeLocal.map(({ pod, allowed }) => (
          <ListItem
            key={podKey(pod)}
            disableGutters
            sx={{ py: 0 }}
            data-allowed={allowed}
          >
            <ListItemText
              sx={WRAP_SX}
              primary={
                <Box display="flex" alignItems="center" gap={1}>
                  <span>{podKey(pod)}</span>
                  <Chip
                    size="small"
                    color={allowed ? 'warning' : 'error'}
                    sx={chipLabelSx(allowed ? 'warning' : 'error')}
                    label={
                      allowed
                        ? 'evicted: unavailable until the node is back'
                        : 'refused unless allowed'
                    }
                  />
                </Box>
              }
              secondary={(pod.nodeLocalData ?? []).map(why => (
                <Box component="span" display="block" key={why}>
                  {why}
                </Box>
              ))}
              primaryTypographyProps={{ component: 'div' }}
            />
          </ListItem>
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
              sx={WRAP_SX}
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
              sx={WRAP_SX}
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
        title="Catalog entities whose pods it evicts"
        count={preflight.affectedEntities?.length ?? 0}
        testId="preflight-owners"
        note="Their owners are notified when the drain starts."
      >
        {(preflight.affectedEntities ?? []).map(entity => (
          <ListItem key={entity.entityRef} disableGutters sx={{ py: 0 }}>
            <ListItemText
              sx={WRAP_SX}
              primary={`${entity.title} (${entity.entityRef})`}
              secondary={`owner ${
                entity.owner ?? 'none in the catalog'
              }; pods ${entity.pods.join(', ')}`}
            />
          </ListItem>
        ))}
      </Section>

      <Section
        title="StatefulSets and their budgets"
        count={statefulSets.length}
        testId="preflight-statefulsets"
        note="A StatefulSet recreates its pods under the same names, one at a time; its budget decides how many of them may be away at once."
      >
        {statefulSets.map(set => (
          <ListItem
            key={`${set.namespace}/${set.name}`}
            disableGutters
            sx={{ py: 0 }}
            data-blocks-now={set.budgets.some(b => b.blocksNow)}
          >
            <ListItemText
              sx={WRAP_SX}
              primary={`StatefulSet ${set.namespace}/${
                set.name
              }: ${statefulSetBudgetText(set)}`}
              secondary={`pods ${set.pods.join(', ')}`}
              primaryTypographyProps={{
                color: set.budgets.some(b => b.blocksNow)
                  ? 'error.main'
                  : undefined,
              }}
            />
          </ListItem>
        ))}
      </Section>

      {ordered && (
        <Section
          title="Eviction order (rackside.dev/drain-order)"
          count={groups.length}
          testId="preflight-order"
          note="Lower groups first; a group is evicted only once every pod of the group before it is gone."
          ordered
        >
          {groups.map((group, i) => (
            <ListItem
              key={group.order}
              disableGutters
              sx={{ py: 0 }}
              data-order={group.order}
            >
              <ListItemText
                sx={WRAP_SX}
                primary={`${i + 1}. Order ${group.order}: ${
                  group.pods.length
                } pod${group.pods.length === 1 ? '' : 's'}${
                  groupSeconds.has(group.order)
                    ? `, about ${durationText(groupSeconds.get(group.order)!)}`
                    : ''
                }`}
                secondary={group.pods.join(', ')}
              />
            </ListItem>
          ))}
        </Section>
      )}

      <Section
        title="Waited for, not evicted (rackside.dev/drain: wait-completed)"
        count={waitCompleted.length}
        testId="preflight-wait-completed"
        note="The drain waits until these pods finish on their own, however long they run."
      >
        {waitCompleted.map(pod => (
          <PodItem key={podKey(pod)} pod={pod} />
        ))}
      </Section>

      <Section
        title="Left in place (rackside.dev/drain: skip)"
        count={skipped.length}
        testId="preflight-skipped"
        note="The drain does not evict these pods; they stay on the node."
      >
        {skipped.map(pod => (
          <PodItem key={podKey(pod)} pod={pod} />
        ))}
      </Section>

      {virtualMachines && (
        <Section
          title="Virtual machines (KubeVirt)"
          count={virtualMachines.length}
          testId="preflight-virtual-machines"
          empty={`No VirtualMachineInstance runs on ${preflight.node}.`}
          note={`${virtualMachinesSummary(
            virtualMachines,
          )}. Each follows its eviction strategy when the drain evicts its pod.`}
        >
          {virtualMachines.map(vm => (
            <ListItem
              key={`${vm.namespace}/${vm.name}`}
              disableGutters
              sx={{ py: 0 }}
              data-action={vm.action}
            >
              <ListItemText
                sx={WRAP_SX}
                primary={
                  <Box display="flex" alignItems="center" gap={1}>
                    <span>{`${vm.namespace}/${vm.name}`}</span>
                    <Chip
                      size="small"
                      color={VM_ACTION_COLORS[vm.action]}
                      sx={chipLabelSx(VM_ACTION_COLORS[vm.action])}
                      label={VM_ACTION_LABELS[vm.action]}
                    />
                  </Box>
                }
                secondary={vm.reason}
                primaryTypographyProps={{
                  component: 'div',
                  color: vm.action === 'blocks' ? 'error.main' : undefined,
                }}
              />
            </ListItem>
          ))}
        </Section>
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
