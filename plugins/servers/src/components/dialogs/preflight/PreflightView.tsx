import Box from '@mui/material/Box';
import Typography from '@mui/material/Typography';
import type { PreflightResponse } from '@rackside/plugin-servers-common';
import {
  BlockersAlert,
  BudgetsSection,
  EstimateLine,
  OrderSection,
  QuorumSection,
} from './DrainSections';
import { PodSection } from './PreflightList';
import {
  NodeLocalSection,
  OwnersSection,
  RefusedSection,
  StatefulSetsSection,
  VirtualMachinesSection,
} from './WorkloadSections';

/**
 * A pre-flight as a person reads it: the expected duration and the slowest
 * pod, the pods a drain evicts, the pods with data on the node, the pods it
 * refuses and why, the StatefulSets and the disruption budgets in the way
 * (those that block now stand out), the eviction order groups, what it waits
 * for and what it leaves in place, the KubeVirt virtual machines on the node
 * and what happens to each, and the quorum effect (docs/architecture.md, "The maintenance lifecycle"; docs/drain.md).
 * Shared by the drain, reboot and shutdown dialogs.
 */
export function PreflightView(props: { preflight: PreflightResponse }) {
  const { preflight } = props;
  return (
    <Box data-testid="preflight" data-token={preflight.token}>
      <Typography variant="caption" color="text.secondary" component="p">
        {`Impact on ${preflight.node} as of ${new Date(
          preflight.takenAt,
        ).toLocaleString()}.`}
      </Typography>
      <BlockersAlert preflight={preflight} />
      {preflight.estimate && (
        <EstimateLine
          estimate={preflight.estimate}
          evicted={preflight.evict.length}
        />
      )}
      <PodSection
        title="Pods to evict"
        pods={preflight.evict}
        testId="preflight-evict"
        empty="No pod needs to be evicted."
      />
      <NodeLocalSection preflight={preflight} />
      <RefusedSection preflight={preflight} />
      <BudgetsSection preflight={preflight} />
      <OwnersSection preflight={preflight} />
      <StatefulSetsSection preflight={preflight} />
      <OrderSection preflight={preflight} />
      <PodSection
        title="Waited for, not evicted (rackside.dev/drain: wait-completed)"
        pods={preflight.waitCompleted ?? []}
        testId="preflight-wait-completed"
        note="The drain waits until these pods finish on their own, however long they run."
      />
      <PodSection
        title="Left in place (rackside.dev/drain: skip)"
        pods={preflight.skipped ?? []}
        testId="preflight-skipped"
        note="The drain does not evict these pods; they stay on the node."
      />
      <VirtualMachinesSection preflight={preflight} />
      <PodSection
        title="DaemonSet pods left in place"
        pods={preflight.daemonSet}
        testId="preflight-daemonset"
      />
      <PodSection
        title="Static pods left in place"
        pods={preflight.mirror}
        testId="preflight-mirror"
      />
      <PodSection
        title="Finished pods (nothing to evict)"
        pods={preflight.finished}
        testId="preflight-finished"
      />
      <QuorumSection preflight={preflight} />
    </Box>
  );
}
