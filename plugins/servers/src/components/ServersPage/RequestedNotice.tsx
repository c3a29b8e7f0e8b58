import Alert from '@mui/material/Alert';
import Snackbar from '@mui/material/Snackbar';
import type { HeldApprovalResponse } from '@rackside/plugin-servers-common';
import { AppLink, useServersLinks } from '../ui/links';
import { approversText } from '../ApprovalPanel/approvalText';
import { formatTime } from '../ui/maintenanceText';

/**
 * The action was requested: the NodeMaintenance's name, and a link to follow it; when a
 * rule held it, who must approve it and until when (docs/approvals.md).
 */
export function RequestedNotice(props: {
  cluster: string;
  /** The NodeMaintenance the backend created or changed; none: nothing to show. */
  maintenance?: string;
  /** The approval it waits for, when a rule held it. */
  approval?: HeldApprovalResponse;
  onClose(): void;
}) {
  const { cluster, maintenance, approval, onClose } = props;
  const links = useServersLinks();
  return (
    <Snackbar
      open={maintenance !== undefined}
      autoHideDuration={8000}
      onClose={onClose}
    >
      <Alert
        severity={approval ? 'info' : 'success'}
        onClose={onClose}
        data-testid="action-success"
      >
        {`Requested: NodeMaintenance ${maintenance ?? ''}`}
        {approval &&
          `. Nothing happens until it is approved by ${approversText(
            approval.approvers,
          )} (rule ${approval.rule}, until ${formatTime(approval.expiresAt)})`}
        {maintenance && links.maintenance && (
          <>
            {' · '}
            <AppLink to={links.maintenance(cluster, maintenance)}>
              follow it
            </AppLink>
          </>
        )}
      </Alert>
    </Snackbar>
  );
}
