export { salesService, SALES_SCHEMA } from './service';
export { SalesConfig } from './config';
export { migrations as salesMigrations } from './db/migrations';
