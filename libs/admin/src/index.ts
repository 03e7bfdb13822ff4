export * from './seed';
