export { EntityServerContent } from './EntityServerContent';
export { ServerCatalogLink } from './ServerCatalogLink';
export {
  CLUSTER_ANNOTATION,
  NODE_ANNOTATION,
  isServerEntity,
  serverTargetOf,
} from './annotations';
