import { Fragment, type ReactNode } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import LinearProgress from '@mui/material/LinearProgress';
import type { ClusterSummaryResponse } from '@rackside/plugin-servers-common';
import { describeError, serversApiRef } from '../api';
import { useLoader } from './useLoader';

/**
 * The clusters of `servers.clusters`, for the pages that show one section per
 * cluster: loading, a failed load and a cluster the backend cannot reach read
 * the same on every page; `empty` is shown when none is configured, and each
 * available cluster is drawn by `renderCluster`.
 */
export function ConfiguredClusters(props: {
  empty: ReactNode;
  renderCluster(cluster: ClusterSummaryResponse): ReactNode;
}) {
  const api = useApi(serversApiRef);
  const clusters = useLoader(() => api.listClusters(), [api]);
  return (
    <>
      {clusters.loading && !clusters.value && <LinearProgress />}
      {clusters.error !== undefined && !clusters.value && (
        <Alert severity="error">
          {`Could not load clusters: ${describeError(clusters.error).message}`}
        </Alert>
      )}
      {clusters.value && clusters.value.length === 0 && props.empty}
      {clusters.value?.map(c =>
        c.available ? (
          <Fragment key={c.name}>{props.renderCluster(c)}</Fragment>
        ) : (
          <Alert key={c.name} severity="warning" sx={{ mb: 2 }}>
            {`Cluster ${c.title || c.name} is unavailable: ${c.error}`}
          </Alert>
        ),
      )}
    </>
  );
}
