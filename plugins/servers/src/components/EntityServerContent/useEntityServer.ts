import { useApi } from '@backstage/core-plugin-api';
import type { ResponseError } from '@backstage/errors';
import type {
  ClusterSummaryResponse,
  ServerResponse,
} from '@rackside/plugin-servers-common';
import { serversApiRef } from '../../api';
import { useLoader, type Loaded } from '../hooks/useLoader';
import type { ServerTarget } from './annotations';

/** What the Server tab shows. */
export interface EntityServer {
  cluster: ClusterSummaryResponse;
  server: ServerResponse;
}

/** Raised when the annotations name no server the backend knows. */
export class ServerNotFoundError extends Error {
  name = 'ServerNotFoundError';
}

/** The server of that name in a cluster; undefined on a 404 (absent, or not readable). */
async function serverIn(
  api: Pick<import('../../api').ServersApi, 'getServer'>,
  cluster: string,
  node: string,
): Promise<ServerResponse | undefined> {
  try {
    return await api.getServer(cluster, node);
  } catch (error) {
    if ((error as ResponseError)?.response?.status === 404) return undefined;
    throw error;
  }
}

/**
 * Finds the annotated server: in its cluster, or (without
 * `rackside.dev/cluster`) in the only cluster that has a node of that name.
 */
export async function findEntityServer(
  api: Pick<import('../../api').ServersApi, 'listClusters' | 'getServer'>,
  target: ServerTarget,
): Promise<EntityServer> {
  const clusters = await api.listClusters();
  const candidates = target.cluster
    ? clusters.filter(c => c.name === target.cluster)
    : clusters;
  if (target.cluster && candidates.length === 0) {
    throw new ServerNotFoundError(
      `No cluster named "${target.cluster}" is configured in Rackside (servers.clusters).`,
    );
  }
  const found: EntityServer[] = [];
  for (const cluster of candidates) {
    const server = await serverIn(api, cluster.name, target.node);
    if (server) found.push({ cluster, server });
  }
  if (found.length === 0) {
    throw new ServerNotFoundError(
      `No server "${target.node}" in ${
        target.cluster ? `cluster ${target.cluster}` : 'any configured cluster'
      }.`,
    );
  }
  if (found.length > 1) {
    throw new ServerNotFoundError(
      `Server "${target.node}" exists in ${found
        .map(f => f.cluster.name)
        .join(', ')}; add the rackside.dev/cluster annotation to choose one.`,
    );
  }
  return found[0];
}

/** Loads the annotated server; `reload()` fetches it again. */
export function useEntityServer(
  target: ServerTarget | undefined,
): Loaded<EntityServer> {
  const api = useApi(serversApiRef);
  return useLoader(async () => {
    if (!target) {
      throw new ServerNotFoundError(
        'This entity has no rackside.dev/node annotation.',
      );
    }
    return findEntityServer(api, target);
  }, [api, target?.cluster, target?.node]);
}
