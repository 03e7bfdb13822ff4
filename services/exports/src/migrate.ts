import { runMigrations } from '@erp/runtime';
import { migrations } from './db/migrations';
import { EXPORTS_SCHEMA } from './db/tables';

runMigrations(EXPORTS_SCHEMA, migrations);
