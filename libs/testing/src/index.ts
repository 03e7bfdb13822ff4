export * from './eventually';
export * from './harness';
export * from './infra';
export * from './isolation';
export * from './ports';
export * from './random';
export * from './streams';
export * from './tenant';
