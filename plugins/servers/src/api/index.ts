export { serversApiRef } from './ServersApi';
export type { ServersApi } from './ServersApi';
export { ServersClient } from './ServersClient';
export { describeError } from './errors';
export type { DescribedError } from './errors';
