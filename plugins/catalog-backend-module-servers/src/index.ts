/**
 * Catalog entity provider publishing Rackside servers as Resource entities.
 *
 * @packageDocumentation
 */
export * from './serverEntity';
