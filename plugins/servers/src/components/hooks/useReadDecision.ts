import { useEffect, useState } from 'react';
import { useApiHolder } from '@backstage/frontend-plugin-api';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import { serversReadPermission } from '@rackside/plugin-servers-common';

/**
 * Whether the user may read servers at all. `servers:read` is a resource
 * permission: a conditional decision means "some servers", which the backend
 * filters per server, so only an outright DENY closes the page. Without a
 * permission API (or when asking fails) the backend's own 403 decides.
 *
 * This is the one permission question not asked through `usePermission`
 * (`@backstage/plugin-permission-react`, used for every basic permission):
 * asked for a resource permission without a `resourceRef`, `usePermission`
 * answers DENY without asking, which would close the page for a user allowed
 * some servers.
 */
export function useReadDecision(): 'loading' | 'allow' | 'deny' {
  const permissionApi = useApiHolder().get(permissionApiRef);
  const [decision, setDecision] = useState<'loading' | 'allow' | 'deny'>(
    permissionApi ? 'loading' : 'allow',
  );
  useEffect(() => {
    if (!permissionApi) return undefined;
    let cancelled = false;
    permissionApi.authorize({ permission: serversReadPermission }).then(
      response => {
        if (cancelled) return;
        setDecision(
          response.result === AuthorizeResult.DENY ? 'deny' : 'allow',
        );
      },
      () => {
        if (!cancelled) setDecision('allow');
      },
    );
    return () => {
      cancelled = true;
    };
  }, [permissionApi]);
  return decision;
}
