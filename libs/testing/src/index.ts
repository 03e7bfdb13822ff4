export * from './infra';
export * from './isolation';
