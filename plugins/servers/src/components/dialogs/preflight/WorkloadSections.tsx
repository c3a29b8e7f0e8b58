import Chip from '@mui/material/Chip';
import Box from '@mui/material/Box';
import {
  podKey,
  type PreflightResponse,
} from '@rackside/plugin-servers-common';
import { chipLabelSx } from '../../ui/chips';
import { DetailItem, Section, WithChip } from './PreflightList';
import {
  nodeLocalPods,
  statefulSetBudgetText,
  virtualMachinesSummary,
  VM_ACTION_COLORS,
  VM_ACTION_LABELS,
} from './preflightText';

/** Each section below reads the one pre-flight it is given. */
type Props = { preflight: PreflightResponse };

/** The pods with data on the node, refused or (allowed on purpose) evicted. */
export function NodeLocalSection({ preflight }: Props) {
  const nodeLocal = nodeLocalPods(preflight);
  return (
    <Section
      title="Pods with data on this node"
      count={nodeLocal.length}
      testId="preflight-node-local"
      note={`A pod whose data is on ${preflight.node} cannot run anywhere else until ${preflight.node} is back. The drain refuses such pods unless you allow it on purpose.`}
    >
      {nodeLocal.map(({ pod, allowed }) => (
        <DetailItem
          key={podKey(pod)}
          data={{ 'data-allowed': allowed }}
          primary={
            <WithChip
              text={podKey(pod)}
              chip={
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
              }
            />
          }
          secondary={(pod.nodeLocalData ?? []).map(why => (
            <Box component="span" display="block" key={why}>
              {why}
            </Box>
          ))}
          primaryTypographyProps={{ component: 'div' }}
        />
      ))}
    </Section>
  );
}

/** The pods the drain refuses, each with why. */
export function RefusedSection({ preflight }: Props) {
  return (
    <Section
      title="Pods refused"
      count={preflight.refused.length}
      testId="preflight-refused"
    >
      {preflight.refused.map(r => (
        <DetailItem
          key={podKey(r.pod)}
          primary={podKey(r.pod)}
          secondary={r.message}
          primaryTypographyProps={{ color: 'error.main' }}
        />
      ))}
    </Section>
  );
}

/** The catalog entities whose pods the drain evicts, and their owners. */
export function OwnersSection({ preflight }: Props) {
  const entities = preflight.affectedEntities ?? [];
  return (
    <Section
      title="Catalog entities whose pods it evicts"
      count={entities.length}
      testId="preflight-owners"
      note="Their owners are notified when the drain starts."
    >
      {entities.map(entity => (
        <DetailItem
          key={entity.entityRef}
          primary={`${entity.title} (${entity.entityRef})`}
          secondary={`owner ${
            entity.owner ?? 'none in the catalog'
          }; pods ${entity.pods.join(', ')}`}
        />
      ))}
    </Section>
  );
}

/** The StatefulSets on the node and the budgets over their pods. */
export function StatefulSetsSection({ preflight }: Props) {
  const statefulSets = preflight.statefulSets ?? [];
  return (
    <Section
      title="StatefulSets and their budgets"
      count={statefulSets.length}
      testId="preflight-statefulsets"
      note="A StatefulSet recreates its pods under the same names, one at a time; its budget decides how many of them may be away at once."
    >
      {statefulSets.map(set => {
        const blocksNow = set.budgets.some(b => b.blocksNow);
        return (
          <DetailItem
            key={`${set.namespace}/${set.name}`}
            data={{ 'data-blocks-now': blocksNow }}
            primary={`StatefulSet ${set.namespace}/${
              set.name
            }: ${statefulSetBudgetText(set)}`}
            secondary={`pods ${set.pods.join(', ')}`}
            primaryTypographyProps={{
              color: blocksNow ? 'error.main' : undefined,
            }}
          />
        );
      })}
    </Section>
  );
}

/**
 * The KubeVirt virtual machines on the node and what the drain does to each;
 * no section at all where the cluster has no KubeVirt API.
 */
export function VirtualMachinesSection({ preflight }: Props) {
  const virtualMachines = preflight.virtualMachines;
  if (!virtualMachines) return null;
  return (
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
        <DetailItem
          key={`${vm.namespace}/${vm.name}`}
          data={{ 'data-action': vm.action }}
          primary={
            <WithChip
              text={`${vm.namespace}/${vm.name}`}
              chip={
                <Chip
                  size="small"
                  color={VM_ACTION_COLORS[vm.action]}
                  sx={chipLabelSx(VM_ACTION_COLORS[vm.action])}
                  label={VM_ACTION_LABELS[vm.action]}
                />
              }
            />
          }
          secondary={vm.reason}
          primaryTypographyProps={{
            component: 'div',
            color: vm.action === 'blocks' ? 'error.main' : undefined,
          }}
        />
      ))}
    </Section>
  );
}
