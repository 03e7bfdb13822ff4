import { runMigrations } from '@erp/runtime';
import { PACKAGES_SCHEMA } from './service';
import { migrations } from './db/migrations';

runMigrations(PACKAGES_SCHEMA, migrations);
