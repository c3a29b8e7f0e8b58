/**
 * Shared by the Rackside browser and server packages: permissions, resource
 * types, and the rules (quorum derivation, guard, ceremony ladder, capability
 * rule) that every caller applies the same way.
 *
 * @packageDocumentation
 */
export * from './permissions';
export * from './resources';
export * from './textLimits';
export * from './api';
export * from './plansApi';
export * from './approvalsApi';
export * from './requestBodies';

// The rules: one file each under rules/ (CONTRIBUTING.md, "Where a new rule goes").
export * from './rules/quorum';
export * from './rules/quorumText';
export * from './rules/guard';
export * from './rules/ceremony';
export * from './rules/capability';
export * from './rules/drain';
export * from './rules/maintenanceRules';
export * from './rules/maintenanceOutcome';
export * from './rules/openMaintenance';
export * from './rules/applicability';
export * from './rules/discoveryNetworks';
export * from './rules/planPhases';
export * from './rules/planWindow';
export * from './rules/planNodes';
export * from './rules/planUpgrade';
export * from './rules/planAuthority';
export * from './rules/planRenewal';
export * from './rules/planGates';
export * from './rules/serverListRules';
export * from './rules/pattern';
export * from './rules/alertMatchers';
export * from './rules/nodeAlertIndex';
export * from './rules/racksideSilences';
export * from './rules/alertGate';
export * from './rules/healthyReturn';
export * from './rules/hardwareHealth';
export * from './rules/upgradeSources';
export * from './rules/firmwareSources';
export * from './rules/approvalPolicy';
