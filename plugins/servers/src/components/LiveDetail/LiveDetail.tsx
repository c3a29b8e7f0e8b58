import type { ReactNode } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import LinearProgress from '@mui/material/LinearProgress';
import { describeError, serversApiRef, type ServersApi } from '../../api';
import { useLiveRefresh } from '../hooks/useLiveRefresh';
import { useLoader } from '../hooks/useLoader';
import { ServerDetailPage } from './ServerDetailPage';

/** What a {@link LiveDetail} page loads and how it names it. */
export interface LiveDetailProps<T> {
  cluster: string;
  name: string;
  /** What the object is, in a sentence: "maintenance", "maintenance plan". */
  kind: string;
  title: string;
  testId: string;
  /** Reads the object; called again on every change signal of its cluster. */
  load(api: ServersApi, cluster: string, name: string): Promise<T>;
  /** The page's content once the object is loaded; `reload` reads it again. */
  children(value: T, reload: () => void): ReactNode;
}

/**
 * The page of one object of a cluster (a maintenance, a plan) under the Servers
 * page: loaded once the user may read servers, loaded again whenever the
 * backend signals that its cluster changed (or by polling), and a 404 or any
 * other error said in a sentence; a failed reload keeps the last answer on
 * screen under a warning.
 */
export function LiveDetail<T>(props: LiveDetailProps<T>) {
  return (
    <ServerDetailPage title={props.title} testId={props.testId}>
      <LiveContent {...props} />
    </ServerDetailPage>
  );
}

function LiveContent<T>(props: LiveDetailProps<T>) {
  const { cluster, name, kind, load, children } = props;
  const api = useApi(serversApiRef);
  const loaded = useLoader(
    () => load(api, cluster, name),
    [api, cluster, name],
  );
  useLiveRefresh(cluster, loaded.reload);
  const error =
    loaded.error !== undefined ? describeError(loaded.error) : undefined;
  return (
    <>
      {loaded.loading && !loaded.value && <LinearProgress />}
      {error && (
        <Alert severity={loaded.value ? 'warning' : 'error'} sx={{ mb: 2 }}>
          {error.status === 404
            ? `There is no ${kind} ${name} in cluster ${cluster}.`
            : `Could not load ${kind} ${name}: ${error.message}`}
        </Alert>
      )}
      {loaded.value !== undefined && children(loaded.value, loaded.reload)}
    </>
  );
}
