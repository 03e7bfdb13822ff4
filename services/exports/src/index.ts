export { exportsService, EXPORTS_SCHEMA } from './service';
export { ExportsConfig } from './config';
export { migrations as exportsMigrations } from './db/migrations';
