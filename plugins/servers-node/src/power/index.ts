export * from './types';
export * from './talos';
export * from './redfish';
