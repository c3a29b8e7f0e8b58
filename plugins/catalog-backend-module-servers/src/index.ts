/**
 * Catalog entity provider publishing Rackside servers as Resource entities
 * (and each cluster as a System).
 *
 * @packageDocumentation
 */
export { catalogModuleServers as default } from './module';
export * from './serverEntity';
export * from './ServersEntityProvider';
