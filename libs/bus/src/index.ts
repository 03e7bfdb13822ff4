export * from './bus';
export * from './headers';
export * from './jetstream';
export * from './outbox';
export type { Logger } from './logger';
export * from './permissions';
export * from './objects';
