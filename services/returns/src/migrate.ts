import { runMigrations } from '@erp/runtime';
import { migrations } from './db/migrations';
import { RETURNS_SCHEMA } from './db/tables';

runMigrations(RETURNS_SCHEMA, migrations);
