export { returnsService } from './service';
export { RETURNS_SCHEMA } from './db/tables';
export { ReturnsConfig } from './config';
export { migrations as returnsMigrations } from './db/migrations';
