export * from './dependencies';
export * from './infra';
export * from './isolation';
