import { Fragment, useRef, type ReactNode } from 'react';
import { useApi } from '@backstage/frontend-plugin-api';
import Alert from '@mui/material/Alert';
import LinearProgress from '@mui/material/LinearProgress';
import type { ClusterSummaryResponse } from '@rackside/plugin-servers-common';
import { describeError, serversApiRef } from '../../api';
import { useLoader } from '../hooks/useLoader';

/**
 * The clusters of `servers.clusters`, for the pages that show one section per
 * cluster: loading, a failed load and a cluster the backend cannot reach read
 * the same on every page; `empty` is shown when none is configured, and each
 * available cluster is drawn by `renderCluster`. With `denied`, a 403 (the
 * backend's `servers:read` denied outright) shows it instead of an error, and
 * `header` is shown only once the clusters are there: the clusters request is
 * then the page's read decision, with no permission round trip before it.
 * `onLoad` sees the clusters as they arrive, before anything renders them.
 * `first` is an answer already asked for (by the page's loader, pageStart.ts):
 * the first load takes it instead of asking again; a reload always asks.
 */
export function ConfiguredClusters(props: {
  empty: ReactNode;
  renderCluster(cluster: ClusterSummaryResponse): ReactNode;
  denied?: ReactNode;
  header?: ReactNode;
  onLoad?(clusters: readonly ClusterSummaryResponse[]): void;
  first?: Promise<ClusterSummaryResponse[]>;
}) {
  const api = useApi(serversApiRef);
  const { onLoad } = props;
  const first = useRef(props.first);
  const clusters = useLoader(() => {
    const answer = first.current ?? api.listClusters();
    first.current = undefined;
    return answer.then(items => {
      onLoad?.(items);
      return items;
    });
  }, [api]);
  const failed = clusters.error !== undefined && !clusters.value;
  if (
    failed &&
    props.denied !== undefined &&
    describeError(clusters.error).status === 403
  ) {
    return <>{props.denied}</>;
  }
  return (
    <>
      {clusters.loading && !clusters.value && <LinearProgress />}
      {clusters.value && props.header}
      {failed && (
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
