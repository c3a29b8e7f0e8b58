import { useState } from 'react';
import { usePermission } from '@backstage/plugin-permission-react';
import Button from '@mui/material/Button';
import Stack from '@mui/material/Stack';
import {
  serversPlanPermission,
  type PlanResponse,
} from '@rackside/plugin-servers-common';
import { LiveDetail } from '../LiveDetail';
import {
  CONTROL_LABELS,
  ControlDialog,
  controlsOf,
  type PlanPageControl,
} from './PlanControls';
import { PlanSteps } from './PlanSteps';
import { PlanNotices, PlanSummary } from './PlanSummary';
import { ApprovalPanel, showsApproval } from '../ApprovalPanel';

/** One plan: its summary, what it waits on, its controls and each node's step. */
export function PlanDetail(props: {
  cluster: string;
  plan: PlanResponse;
  onChanged(): void;
}) {
  const { cluster, plan, onChanged } = props;
  // Asking failed: the controls are offered and the backend's 403 decides.
  const planning = usePermission({ permission: serversPlanPermission });
  const canPlan = planning.allowed || planning.error !== undefined;
  const [control, setControl] = useState<PlanPageControl>();
  return (
    <>
      <PlanSummary plan={plan} />
      <PlanNotices plan={plan} />
      {showsApproval(plan) && (
        <ApprovalPanel
          cluster={cluster}
          kind="plan"
          name={plan.name}
          version={plan.phase}
          onDecided={onChanged}
        />
      )}
      {canPlan && controlsOf(plan).length > 0 && (
        <Stack direction="row" spacing={1} mb={2}>
          {controlsOf(plan).map(c => (
            <Button
              key={c}
              variant="outlined"
              color={c === 'cancel' ? 'error' : 'primary'}
              onClick={() => setControl(c)}
              data-testid={`plan-${c}`}
            >
              {CONTROL_LABELS[c]}
            </Button>
          ))}
        </Stack>
      )}
      <PlanSteps cluster={cluster} plan={plan} />
      {control && (
        <ControlDialog
          cluster={cluster}
          plan={plan}
          control={control}
          onClose={done => {
            setControl(undefined);
            if (done) onChanged();
          }}
        />
      )}
    </>
  );
}

/** The page of one maintenance plan (`/servers/plans/:cluster/:name`). */
export function PlanPage(props: { cluster: string; name: string }) {
  const { cluster, name } = props;
  return (
    <LiveDetail
      cluster={cluster}
      name={name}
      kind="maintenance plan"
      title={`Maintenance plan ${name}`}
      testId="rackside-plan-page"
      load={(api, c, n) => api.getPlan(c, n)}
    >
      {(plan, reload) => (
        <PlanDetail cluster={cluster} plan={plan} onChanged={reload} />
      )}
    </LiveDetail>
  );
}
