import Alert from '@mui/material/Alert';
import Snackbar from '@mui/material/Snackbar';
import { AppLink, useServersLinks } from '../ui/links';

/** The action was requested: the NodeMaintenance's name, and a link to follow it. */
export function RequestedNotice(props: {
  cluster: string;
  /** The NodeMaintenance the backend created or changed; none: nothing to show. */
  maintenance?: string;
  onClose(): void;
}) {
  const { cluster, maintenance, onClose } = props;
  const links = useServersLinks();
  return (
    <Snackbar
      open={maintenance !== undefined}
      autoHideDuration={8000}
      onClose={onClose}
    >
      <Alert severity="success" onClose={onClose} data-testid="action-success">
        {`Requested: NodeMaintenance ${maintenance ?? ''}`}
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
