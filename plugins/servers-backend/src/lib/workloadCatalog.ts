import type { AuthService } from '@backstage/backend-plugin-api';
import {
  parseEntityRef,
  stringifyEntityRef,
  type Entity,
} from '@backstage/catalog-model';
import type { CatalogService } from '@backstage/plugin-catalog-node';
import {
  KUBERNETES_ID_LABEL,
  type AffectedEntity,
  type EvictedWorkload,
} from '@rackside/plugin-servers-common';

/**
 * Who the workloads of a drain belong to: the catalog entities annotated with the
 * `backstage.io/kubernetes-id` their pods carry, with their owners. Kept small so
 * the pre-flight and the notifier can be tested without a catalog.
 */
export interface WorkloadCatalog {
  /** The entities of these workloads (an id no entity carries is left out). */
  entitiesOf(workloads: EvictedWorkload[]): Promise<AffectedEntity[]>;
}

/** The annotation key as a catalog filter key. */
const ANNOTATION_FILTER = `metadata.annotations.${KUBERNETES_ID_LABEL}`;

/** `spec.owner` as a full ref (a bare name is a group in the entity's namespace). */
function ownerOf(entity: Entity): string | undefined {
  const owner = (entity.spec as { owner?: unknown } | undefined)?.owner;
  if (typeof owner !== 'string' || !owner.trim()) return undefined;
  try {
    return stringifyEntityRef(
      parseEntityRef(owner, {
        defaultKind: 'group',
        defaultNamespace: entity.metadata.namespace ?? 'default',
      }),
    );
  } catch {
    return undefined;
  }
}

/** A {@link WorkloadCatalog} over the catalog service, as the plugin itself. */
export function catalogWorkloads(options: {
  catalog: CatalogService;
  auth: AuthService;
}): WorkloadCatalog {
  const { catalog, auth } = options;
  return {
    async entitiesOf(workloads) {
      if (workloads.length === 0) return [];
      const { items } = await catalog.getEntities(
        {
          filter: { [ANNOTATION_FILTER]: workloads.map(w => w.kubernetesId) },
          fields: [
            'kind',
            'metadata.name',
            'metadata.namespace',
            'metadata.title',
            'metadata.annotations',
            'spec.owner',
          ],
        },
        { credentials: await auth.getOwnServiceCredentials() },
      );
      return affectedEntitiesOf(workloads, items);
    },
  };
}

/** Joins the workloads with the entities that carry their ids (several may share one). */
export function affectedEntitiesOf(
  workloads: EvictedWorkload[],
  entities: Entity[],
): AffectedEntity[] {
  const out: AffectedEntity[] = [];
  for (const entity of entities) {
    const id = entity.metadata.annotations?.[KUBERNETES_ID_LABEL];
    const workload = workloads.find(w => w.kubernetesId === id);
    if (!workload) continue;
    out.push({
      entityRef: stringifyEntityRef(entity),
      title: entity.metadata.title ?? entity.metadata.name,
      owner: ownerOf(entity),
      kubernetesId: workload.kubernetesId,
      pods: workload.pods,
    });
  }
  return out.sort((a, b) => a.entityRef.localeCompare(b.entityRef));
}
