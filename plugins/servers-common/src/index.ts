/**
 * Shared by the Rackside browser and server packages: permissions, resource
 * types, and the rules (quorum derivation, guard, ceremony ladder, capability
 * rule) that every caller applies the same way.
 *
 * @packageDocumentation
 */
export * from './permissions';
export * from './quorum';
export * from './quorumText';
export * from './guard';
export * from './ceremony';
export * from './capability';
export * from './drain';
export * from './maintenanceRules';
export * from './maintenanceOutcome';
export * from './openMaintenance';
export * from './applicability';
export * from './discoveryNetworks';
export * from './resources';
export * from './planPhases';
export * from './planWindow';
export * from './planNodes';
export * from './planAuthority';
export * from './planGates';
export * from './textLimits';
export * from './serverListRules';
export * from './api';
export * from './plansApi';
export * from './requestBodies';
