import { runMigrations } from '@erp/runtime';
import { RETURNS_SCHEMA } from './service';
import { migrations } from './db/migrations';

runMigrations(RETURNS_SCHEMA, migrations);
