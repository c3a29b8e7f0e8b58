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

/** How long a node's entity lookup is reused. */
const CACHE_MS = 30_000;
/**
 * Nodes asked in one catalog query at most: the filter travels in the URL, and
 * a node name is up to 63 characters.
 */
export const NODES_PER_QUERY = 50;

/** A node's lookup waiting for its query. */
type Waiter = {
  resolve(ref: string | undefined): void;
  reject(error: unknown): void;
};
/** By cluster and node: the entity ref lookup and when it was asked. */
const lookups = new Map<
  string,
  { at: number; ref: Promise<string | undefined> }
>();
/** By cluster: the nodes asked since the last query went out. */
const pending = new Map<string, Map<string, Waiter>>();

async function queryNodes(
  catalogApi: Pick<CatalogApi, 'getEntities'>,
  cluster: string,
  nodes: string[],
): Promise<Map<string, string>> {
  const { items } = await catalogApi.getEntities({
    filter: {
      [`metadata.annotations.${CLUSTER_ANNOTATION}`]: cluster,
      [`metadata.annotations.${NODE_ANNOTATION}`]: nodes,
    },
    fields: [
      'kind',
      'metadata.name',
      'metadata.namespace',
      'metadata.annotations',
      'spec.type',
    ],
  });
  const byNode = new Map<string, string>();
  // The provider's `server` Resources win over hand-written entities of the same node.
  const ranked = [...items].sort(
    (a: Entity, b: Entity) =>
      Number(a.spec?.type === 'server') - Number(b.spec?.type === 'server'),
  );
  for (const entity of ranked) {
    const node = entity.metadata.annotations?.[NODE_ANNOTATION];
    if (node) byNode.set(node, stringifyEntityRef(entity));
  }
  return byNode;
}

function flush(catalogApi: Pick<CatalogApi, 'getEntities'>, cluster: string) {
  const batch = pending.get(cluster);
  pending.delete(cluster);
  if (!batch) return;
  const names = [...batch.keys()];
  for (let i = 0; i < names.length; i += NODES_PER_QUERY) {
    const part = names.slice(i, i + NODES_PER_QUERY);
    queryNodes(catalogApi, cluster, part).then(
      byNode => part.forEach(n => batch.get(n)!.resolve(byNode.get(n))),
      error => part.forEach(n => batch.get(n)!.reject(error)),
    );
  }
}

/**
 * The catalog entity of a cluster's node, by ref (undefined when there is none).
 * The nodes asked in the same turn (the rows a table draws at once) go out as
 * one catalog query for just those nodes, so a page of 10,000 servers asks for
 * the few in view, never for every server of the cluster; an answer is reused
 * for {@link CACHE_MS}.
 */
export function serverEntityRef(
  catalogApi: Pick<CatalogApi, 'getEntities'>,
  cluster: string,
  node: string,
  now = Date.now(),
): Promise<string | undefined> {
  const key = `${cluster}\u0000${node}`;
  const hit = lookups.get(key);
  if (hit && now - hit.at < CACHE_MS) return hit.ref;
  let batch = pending.get(cluster);
  if (!batch) {
    batch = new Map();
    pending.set(cluster, batch);
    // After every row of this render has asked (effects run in one synchronous pass).
    Promise.resolve().then(() => flush(catalogApi, cluster));
  }
  const current = batch;
  const ref = new Promise<string | undefined>((resolve, reject) =>
    current.set(node, { resolve, reject }),
  );
  // A failure is forgotten, so the next ask retries, unless a newer ask replaced it.
  ref.catch(() => {
    if (lookups.get(key)?.ref === ref) lookups.delete(key);
  });
  lookups.set(key, { at: now, ref });
  return ref;
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
    serverEntityRef(catalogApi, props.cluster, props.node).then(
      ref => {
        if (!cancelled) setEntityRef(ref);
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
