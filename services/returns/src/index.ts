export { returnsService, RETURNS_SCHEMA } from './service';
export { ReturnsConfig } from './config';
export { migrations as returnsMigrations } from './db/migrations';
