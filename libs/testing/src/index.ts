export * from './eventually';
export * from './infra';
export * from './isolation';
