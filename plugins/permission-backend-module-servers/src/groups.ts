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

/**
 * Group membership from the catalog: the user's `memberOf` relations and
 * their `childOf` parents, so a grant to `group:default/plant` reaches the
 * members of its child teams. Answers are kept for `cacheSeconds`; a catalog
 * failure is logged and counts as "no groups" (the user keeps only what was
 * granted to them by name); neither it nor an unknown user is cached.
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
    const groups = this.lookup(key);
    this.cache.set(key, { at: now, groups });
    try {
      const found = await groups;
      // A user the catalog does not know (yet: it may still be ingesting
      // the org) is asked about again next time rather than kept groupless.
      if (found === undefined) {
        this.cache.delete(key);
        return [];
      }
      return found;
    } catch (error) {
      this.cache.delete(key);
      this.options.logger.warn(
        `could not read the groups of ${key} from the catalog; deciding on the user's own grants only: ${error}`,
      );
      return [];
    }
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
