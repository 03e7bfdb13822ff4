import { runMigrations } from '@erp/runtime';
import { migrations } from './db/migrations';
import { PACKAGES_SCHEMA } from './db/tables';

runMigrations(PACKAGES_SCHEMA, migrations);
