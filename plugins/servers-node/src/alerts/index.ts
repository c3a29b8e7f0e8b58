export * from './AlertmanagerClient';
