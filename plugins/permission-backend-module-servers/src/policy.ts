import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import type {
  PermissionPolicy,
  PolicyQuery,
  PolicyQueryUser,
} from '@backstage/plugin-permission-node';
import type { ServersPolicyConfig } from './config';
import { decideServersPermission, isRacksidePermission } from './decide';
import type { GroupResolver } from './groups';

/** The user entity ref of a policy query's user, if it is a user. */
export function userEntityRefOf(user?: PolicyQueryUser): string | undefined {
  const principal = user?.credentials?.principal as
    | { type?: string; userEntityRef?: string }
    | undefined;
  if (principal?.type === 'user' && principal.userEntityRef) {
    return principal.userEntityRef;
  }
  return user?.info?.userEntityRef;
}

/**
 * The app-config permission policy: Rackside's permissions by tier, allow
 * and deny lines (see {@link decideServersPermission}); every other
 * permission by `otherPermissions`.
 */
export class ServersPermissionPolicy implements PermissionPolicy {
  constructor(
    private readonly config: ServersPolicyConfig,
    private readonly groups: GroupResolver,
  ) {}

  async handle(
    request: PolicyQuery,
    user?: PolicyQueryUser,
  ): Promise<PolicyDecision> {
    if (!isRacksidePermission(request.permission)) {
      return {
        result:
          this.config.otherPermissions === 'allow'
            ? AuthorizeResult.ALLOW
            : AuthorizeResult.DENY,
      };
    }
    const userRef = userEntityRefOf(user)?.toLocaleLowerCase('en-US');
    if (!userRef) return { result: AuthorizeResult.DENY };
    const groups = await this.groups.groupsOf(userRef);
    return decideServersPermission(
      request.permission,
      [userRef, ...groups],
      this.config,
    );
  }
}
