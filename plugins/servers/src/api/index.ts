export { serversApiRef } from './ServersApi';
export type { PreflightOptions, ServersApi } from './ServersApi';
export { ServersClient } from './ServersClient';
export {
  ApprovalRungGrewError,
  describeError,
  PreflightChangedError,
} from './errors';
export type { DescribedError } from './errors';
export { machinesApiRef } from './MachinesApi';
export type { MachinesApi } from './MachinesApi';
export { MachinesClient } from './MachinesClient';
