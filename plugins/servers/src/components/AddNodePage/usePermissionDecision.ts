import { useEffect, useState } from 'react';
import { useApiHolder } from '@backstage/frontend-plugin-api';
import {
  AuthorizeResult,
  type BasicPermission,
} from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';

/** What the permission framework says about one basic permission. */
export type PermissionDecision = 'loading' | 'allow' | 'deny';

/**
 * Whether the user holds a basic permission (`machines:*`), for showing or hiding
 * buttons. Without a permission API (or when asking fails) the answer is `allow`:
 * the backend checks every request anyway and its 403 says what is missing.
 */
export function usePermissionDecision(
  permission: BasicPermission,
): PermissionDecision {
  const permissionApi = useApiHolder().get(permissionApiRef);
  const [decision, setDecision] = useState<PermissionDecision>(
    permissionApi ? 'loading' : 'allow',
  );
  useEffect(() => {
    if (!permissionApi) return undefined;
    let cancelled = false;
    permissionApi.authorize({ permission }).then(
      response => {
        if (!cancelled) {
          setDecision(
            response.result === AuthorizeResult.ALLOW ? 'allow' : 'deny',
          );
        }
      },
      () => {
        if (!cancelled) setDecision('allow');
      },
    );
    return () => {
      cancelled = true;
    };
  }, [permissionApi, permission]);
  return decision;
}
