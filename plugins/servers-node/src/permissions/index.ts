export * from './serverResource';
export * from './rules';
export * from './conditions';
