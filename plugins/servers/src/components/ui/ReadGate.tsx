import type { ReactNode } from 'react';
import Alert from '@mui/material/Alert';
import LinearProgress from '@mui/material/LinearProgress';

/** What a Servers page shows to a user who may not read servers at all. */
export function ReadDenied() {
  return (
    <Alert severity="warning">
      You are not allowed to see servers (servers:read).
    </Alert>
  );
}

/**
 * What a Servers page shows under its heading by {@link useReadDecision}: a
 * warning for a user who may not read servers, a progress bar while asking, the
 * content once allowed.
 */
export function ReadGate(props: {
  decision: 'loading' | 'allow' | 'deny';
  children: ReactNode;
}) {
  const { decision, children } = props;
  if (decision === 'deny') return <ReadDenied />;
  if (decision === 'loading') return <LinearProgress />;
  return <>{children}</>;
}
