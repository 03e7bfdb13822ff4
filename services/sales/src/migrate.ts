import { runMigrations } from '@erp/runtime';
import { migrations } from './db/migrations';
import { SALES_SCHEMA } from './db/tables';

runMigrations(SALES_SCHEMA, migrations);
