/**
 * The Rackside backend plugin: servers, pre-flight and maintenance actions
 * under `/api/servers`.
 *
 * @packageDocumentation
 */
export { serversPlugin as default } from './plugin';
