export * from './boundedBody';
