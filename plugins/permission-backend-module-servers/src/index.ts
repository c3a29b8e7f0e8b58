/**
 * Opt-in permission policy for Rackside read from app-config.
 *
 * @packageDocumentation
 */
export * from './tiers';
