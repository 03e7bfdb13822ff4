import { runMigrations } from '@erp/runtime';
import { SALES_SCHEMA } from './service';
import { migrations } from './db/migrations';

runMigrations(SALES_SCHEMA, migrations);
