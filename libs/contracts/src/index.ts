export * from './errors';
export * from './validation';
export * from './context';
export * from './catalog';
export * from './http';
export * from './subjects';
export * from './gateway';
export * from './inventory';
