/**
 * Node-only code shared by the Rackside backend plugin and the operator:
 * cluster access, resource clients, watch caches and power channels.
 *
 * @packageDocumentation
 */
export * from './clusterConfig';
export * from './permissions';
export * from './clients';
export * from './watch';
export * from './power';
export * from './alerts';
export * from './http';
