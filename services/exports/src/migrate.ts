import { runMigrations } from '@erp/runtime';
import { EXPORTS_SCHEMA } from './service';
import { migrations } from './db/migrations';

runMigrations(EXPORTS_SCHEMA, migrations);
