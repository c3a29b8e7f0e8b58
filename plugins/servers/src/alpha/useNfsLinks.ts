import { useMemo } from 'react';
import { useRouteRef } from '@backstage/frontend-plugin-api';
import {
  addNodeRouteRef,
  approvalsRouteRef,
  maintenanceRouteRef,
  planRouteRef,
  serversRouteRef,
} from '../routes';
import type { ServersLinks } from '../components/ui/links';

/**
 * The links of the shared components in the new frontend system, from its own
 * route refs.
 */
export function useNfsLinks(): ServersLinks {
  const servers = useRouteRef(serversRouteRef);
  const maintenance = useRouteRef(maintenanceRouteRef);
  const addNode = useRouteRef(addNodeRouteRef);
  const plan = useRouteRef(planRouteRef);
  const approvals = useRouteRef(approvalsRouteRef);
  return useMemo(
    () => ({
      servers: servers && (() => servers()),
      maintenance:
        maintenance &&
        ((cluster: string, name: string) => maintenance({ cluster, name })),
      plan:
        plan && ((cluster: string, name: string) => plan({ cluster, name })),
      addNode: addNode && (() => addNode()),
      approvals: approvals && (() => approvals()),
    }),
    [servers, maintenance, plan, addNode, approvals],
  );
}
