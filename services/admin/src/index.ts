export * from './seed';
export * from './connect';
export * from './audit';
export * from './schema-clients';
