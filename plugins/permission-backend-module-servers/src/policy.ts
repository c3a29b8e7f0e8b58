import {
  AuthorizeResult,
  type PolicyDecision,
} from '@backstage/plugin-permission-common';
import type {
  PermissionPolicy,
  PolicyQuery,
  PolicyQueryUser,
} from '@backstage/plugin-permission-node';
import type { LoggerService } from '@backstage/backend-plugin-api';
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
 *
 * When the user's groups cannot be read (the catalog failed or timed out),
 * a permission that any group's deny line names (with or without
 * conditions) is denied and logged: the user may be in that group. Any
 * other permission is decided on what is granted to the user by name.
 */
export class ServersPermissionPolicy implements PermissionPolicy {
  /** Permissions some group's deny line names: unknown groups could deny them. */
  private readonly groupDenied: ReadonlySet<string>;

  constructor(
    private readonly config: ServersPolicyConfig,
    private readonly groups: GroupResolver,
    private readonly logger?: LoggerService,
  ) {
    this.groupDenied = new Set(
      config.principals
        .filter(p => p.ref.startsWith('group:'))
        .flatMap(p => p.deny.map(rule => rule.permission)),
    );
  }

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
    let groups: string[];
    try {
      groups = await this.groups.groupsOf(userRef);
    } catch (error) {
      const name = request.permission.name;
      if (this.groupDenied.has(name)) {
        this.logger?.warn(
          `denied ${name} to ${userRef}: a group deny line could deny it and the user's groups are unknown (${error})`,
        );
        return { result: AuthorizeResult.DENY };
      }
      this.logger?.warn(
        `deciding ${name} for ${userRef} on the user's own grants: no group deny line names it and the user's groups are unknown (${error})`,
      );
      groups = [];
    }
    return decideServersPermission(
      request.permission,
      [userRef, ...groups],
      this.config,
    );
  }
}
