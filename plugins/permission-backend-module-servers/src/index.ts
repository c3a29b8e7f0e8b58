/**
 * Opt-in permission policy for Rackside read from app-config
 * (`permission.rackside`): tiers, allow and deny lists, conditions over the
 * server rules. The helpers are exported for policies written in code.
 *
 * @packageDocumentation
 */
export { permissionModuleServersPolicy as default } from './module';
export * from './tiers';
export * from './config';
export * from './decide';
export * from './groups';
export * from './policy';
export {
  serverConditions,
  createServerConditionalDecision,
  serverPermissionRules,
} from '@rackside/plugin-servers-node';
