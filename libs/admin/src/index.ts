export * from './seed';
export * from './connect';
