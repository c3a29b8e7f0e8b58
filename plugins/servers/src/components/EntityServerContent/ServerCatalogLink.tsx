import type { Entity } from '@backstage/catalog-model';
import { stringifyEntityRef } from '@backstage/catalog-model';
import { useApiHolder } from '@backstage/core-plugin-api';
import {
  catalogApiRef,
  EntityRefLink,
  type CatalogApi,
} from '@backstage/plugin-catalog-react';
import { useEffect, useState } from 'react';
import { CLUSTER_ANNOTATION, NODE_ANNOTATION } from './annotations';

/** How long one cluster's entity lookup is reused by every row. */
const CACHE_MS = 30_000;

type NodeEntities = ReadonlyMap<string, string>;
const lookups = new Map<string, { at: number; refs: Promise<NodeEntities> }>();

/**
 * The catalog entities annotated with a cluster, by node name: one catalog
 * query per cluster, shared by every row. The provider's `server`
 * Resources win over hand-written entities of the same node.
 */
export function serverEntityRefs(
  catalogApi: Pick<CatalogApi, 'getEntities'>,
  cluster: string,
  now = Date.now(),
): Promise<NodeEntities> {
  const hit = lookups.get(cluster);
  if (hit && now - hit.at < CACHE_MS) return hit.refs;
  const refs = catalogApi
    .getEntities({
      filter: { [`metadata.annotations.${CLUSTER_ANNOTATION}`]: cluster },
      fields: [
        'kind',
        'metadata.name',
        'metadata.namespace',
        'metadata.annotations',
        'spec.type',
      ],
    })
    .then(({ items }) => {
      const byNode = new Map<string, string>();
      const ranked = [...items].sort(
        (a: Entity, b: Entity) =>
          Number(a.spec?.type === 'server') - Number(b.spec?.type === 'server'),
      );
      for (const entity of ranked) {
        const node = entity.metadata.annotations?.[NODE_ANNOTATION];
        if (node) byNode.set(node, stringifyEntityRef(entity));
      }
      return byNode as NodeEntities;
    });
  refs.catch(() => lookups.delete(cluster));
  lookups.set(cluster, { at: now, refs });
  return refs;
}

/**
 * A link from a Servers row to the server's catalog entity. Renders
 * nothing where the app has no catalog or the catalog has no entity for the
 * server.
 */
export function ServerCatalogLink(props: { cluster: string; node: string }) {
  const catalogApi = useApiHolder().get(catalogApiRef);
  const [entityRef, setEntityRef] = useState<string>();
  useEffect(() => {
    if (!catalogApi) return undefined;
    let cancelled = false;
    serverEntityRefs(catalogApi, props.cluster).then(
      refs => {
        if (!cancelled) setEntityRef(refs.get(props.node));
      },
      () => {},
    );
    return () => {
      cancelled = true;
    };
  }, [catalogApi, props.cluster, props.node]);
  if (!entityRef) return null;
  return (
    <EntityRefLink
      entityRef={entityRef}
      hideIcon
      disableTooltip
      variant="caption"
      aria-label={`catalog entity of ${props.node}`}
      data-testid="server-catalog-link"
    >
      catalog entity
    </EntityRefLink>
  );
}
