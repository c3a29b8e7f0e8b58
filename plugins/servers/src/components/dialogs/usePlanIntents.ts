import { useEffect, useState } from 'react';
import { useApiHolder } from '@backstage/frontend-plugin-api';
import { AuthorizeResult } from '@backstage/plugin-permission-common';
import { permissionApiRef } from '@backstage/plugin-permission-react';
import {
  serverActionPermissions,
  type PlanIntent,
} from '@rackside/plugin-servers-common';

/** What every plan dialog offers; the installing intents are offered by permission. */
const ALWAYS: readonly PlanIntent[] = ['drain', 'reboot'];
const BY_PERMISSION: readonly PlanIntent[] = ['upgrade', 'firmware'];

/**
 * The intents the plan dialog offers: drain and reboot, then Upgrade Talos and Update
 * firmware where the user holds `servers:upgrade` / `servers:firmware`. Both are
 * resource permissions: a conditional decision means "some servers", so only an outright
 * DENY leaves the intent out, and the plan pre-flight's 403 names the selected servers
 * the condition refuses (as useReadDecision reads `servers:read`). Without a permission
 * API (or when asking fails) the intent is offered and the backend decides.
 */
export function usePlanIntents(): readonly PlanIntent[] {
  const permissionApi = useApiHolder().get(permissionApiRef);
  const [allowed, setAllowed] = useState<readonly PlanIntent[]>(
    permissionApi ? [] : BY_PERMISSION,
  );
  useEffect(() => {
    if (!permissionApi) return undefined;
    let cancelled = false;
    Promise.all(
      BY_PERMISSION.map(intent =>
        permissionApi
          .authorize({
            permission:
              serverActionPermissions[intent as 'upgrade' | 'firmware'],
          })
          .then(
            response => response.result !== AuthorizeResult.DENY,
            () => true,
          ),
      ),
    ).then(answers => {
      if (!cancelled) setAllowed(BY_PERMISSION.filter((_, i) => answers[i]));
    });
    return () => {
      cancelled = true;
    };
  }, [permissionApi]);
  return [...ALWAYS, ...allowed];
}
