import {
  RELATION_CHILD_OF,
  RELATION_MEMBER_OF,
  type Entity,
} from '@backstage/catalog-model';
import type { AuthService, LoggerService } from '@backstage/backend-plugin-api';
import type { CatalogService } from '@backstage/plugin-catalog-node';

/** Finds the groups a user belongs to. */
export interface GroupResolver {
  /** Lower-case group refs, direct and inherited from parent groups. */
  groupsOf(userEntityRef: string): Promise<string[]>;
}

/** Parent groups are followed this many levels up (cycles are cut too). */
const MAX_GROUP_DEPTH = 10;

function targets(entity: Entity | undefined, type: string): string[] {
  return (entity?.relations ?? [])
    .filter(r => r.type === type)
    .map(r => r.targetRef.toLocaleLowerCase('en-US'));
}

/** How long the catalog is given to answer a user's groups by default. */
export const DEFAULT_GROUP_LOOKUP_TIMEOUT_MS = 5000;

/**
 * The catalog could not say which groups a user is in (it failed or did not
 * answer in time). Not "no groups": the user may be in a group with a deny
 * line, so the policy must not decide as if they were in none.
 */
export class GroupLookupError extends Error {
  constructor(userEntityRef: string, cause: unknown) {
    super(
      `could not read the groups of ${userEntityRef} from the catalog: ${cause}`,
    );
    this.name = 'GroupLookupError';
  }
}

/**
 * Group membership from the catalog: the user's `memberOf` relations and
 * their `childOf` parents, so a grant to `group:default/plant` reaches the
 * members of its child teams. Answers are kept for `cacheSeconds`. A catalog
 * failure, or no answer within `timeoutMs`, is a {@link GroupLookupError}
 * (the policy then fails closed); neither it nor an unknown user is cached.
 */
export class CatalogGroupResolver implements GroupResolver {
  private readonly cache = new Map<
    string,
    { at: number; groups: Promise<string[] | undefined> }
  >();

  constructor(
    private readonly options: {
      catalog: CatalogService;
      auth: AuthService;
      logger: LoggerService;
      cacheSeconds: number;
      /** Default {@link DEFAULT_GROUP_LOOKUP_TIMEOUT_MS}. */
      timeoutMs?: number;
      now?: () => number;
    },
  ) {}

  async groupsOf(userEntityRef: string): Promise<string[]> {
    const key = userEntityRef.toLocaleLowerCase('en-US');
    const now = (this.options.now ?? Date.now)();
    const hit = this.cache.get(key);
    if (hit && now - hit.at < this.options.cacheSeconds * 1000) {
      return (await hit.groups) ?? [];
    }
    const groups = this.withTimeout(this.lookup(key));
    const entry = { at: now, groups };
    this.cache.set(key, entry);
    const forget = () => {
      // Only this lookup's entry: a later one may have replaced it.
      if (this.cache.get(key) === entry) this.cache.delete(key);
    };
    try {
      const found = await groups;
      // A user the catalog does not know (yet: it may still be ingesting
      // the org) is asked about again next time rather than kept groupless.
      if (found === undefined) {
        forget();
        return [];
      }
      return found;
    } catch (error) {
      forget();
      throw new GroupLookupError(key, error);
    }
  }

  private withTimeout<T>(lookup: Promise<T>): Promise<T> {
    const ms = this.options.timeoutMs ?? DEFAULT_GROUP_LOOKUP_TIMEOUT_MS;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`the catalog did not answer within ${ms} ms`)),
        ms,
      );
    });
    return Promise.race([lookup, timeout]).finally(() => clearTimeout(timer));
  }

  private async lookup(userRef: string): Promise<string[] | undefined> {
    const { catalog, auth } = this.options;
    const credentials = await auth.getOwnServiceCredentials();
    const user = await catalog.getEntityByRef(userRef, { credentials });
    if (!user) return undefined;
    const found = new Set<string>();
    let frontier = targets(user, RELATION_MEMBER_OF);
    for (
      let depth = 0;
      frontier.length > 0 && depth < MAX_GROUP_DEPTH;
      depth++
    ) {
      const fresh = frontier.filter(ref => !found.has(ref));
      fresh.forEach(ref => found.add(ref));
      if (fresh.length === 0) break;
      const { items } = await catalog.getEntitiesByRefs(
        { entityRefs: fresh, fields: ['kind', 'metadata', 'relations'] },
        { credentials },
      );
      frontier = items.flatMap(group => targets(group, RELATION_CHILD_OF));
    }
    return [...found].filter(ref => ref.startsWith('group:'));
  }
}
