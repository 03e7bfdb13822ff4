export { salesService } from './service';
export { SALES_SCHEMA } from './db/tables';
export { SalesConfig, SALES_DEFAULTS } from './config';
export { migrations as salesMigrations } from './db/migrations';
export { addToDailySummarySql, DAILY_SUMMARY_TRIGGERS } from './db/daily-summary';
