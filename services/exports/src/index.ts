export { exportsService } from './service';
export { EXPORTS_SCHEMA } from './db/tables';
export { ExportsConfig } from './config';
export { migrations as exportsMigrations } from './db/migrations';
