import Alert from '@mui/material/Alert';
import LinearProgress from '@mui/material/LinearProgress';
import type { PlanPreflightState } from '../hooks/usePlanPreflight';
import { AppLink, useServersLinks } from '../ui/links';
import { IMPACT_CHANGED, NOTHING_CHANGED } from './ceremonyText';

/** The plan was created: its name, a link to its page where the app has one. */
export function PlanCreated(props: { cluster: string; created: string }) {
  const { cluster, created } = props;
  const links = useServersLinks();
  return (
    <Alert severity="success" data-testid="plan-created">
      {'Plan '}
      {links.plan ? (
        <AppLink to={links.plan(cluster, created)}>{created}</AppLink>
      ) : (
        created
      )}
      {' was created; the operator takes the servers through it.'}
    </Alert>
  );
}

/** Where the plan pre-flight is: being taken, failed, or replaced by the backend's. */
export function PlanPreflightStatus(props: { state: PlanPreflightState }) {
  const { preflight, loadError, changed, waitingForTarget } = props.state;
  return (
    <>
      {!preflight && !loadError && !waitingForTarget && (
        <LinearProgress aria-label="loading the plan pre-flight" />
      )}
      {loadError && (
        <Alert severity="error" sx={{ mb: 2 }}>
          {`Could not load the plan pre-flight: ${loadError}`}
        </Alert>
      )}
      {changed && (
        <Alert
          severity="warning"
          sx={{ mb: 2 }}
          data-testid="plan-impact-changed"
        >
          {`${IMPACT_CHANGED}: review the new pre-flight and acknowledge it again. ${NOTHING_CHANGED}`}
        </Alert>
      )}
    </>
  );
}

/** A refusal of the plan other than the reason's 400 (that one shows under the reason). */
export function PlanErrorAlert(props: {
  error: { message: string; status?: number };
}) {
  const { error } = props;
  return (
    <Alert
      severity="error"
      sx={{ mt: 2 }}
      data-testid="plan-error"
      role="alert"
    >
      {`${error.message}${error.status === 409 ? ` ${NOTHING_CHANGED}` : ''}`}
    </Alert>
  );
}
