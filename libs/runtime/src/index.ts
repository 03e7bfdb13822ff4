export * from './config';
export * from './logger';
export * from './metrics';
export * from './periodic';
export * from './service';
export * from './migrate';
export * from './dependencies';
export * from './crash';
export type { ReadinessCheck } from './ops-server';
