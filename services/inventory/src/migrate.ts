import { runMigrations } from '@erp/runtime';
import { migrations } from './db/migrations';
import { INVENTORY_SCHEMA } from './db/tables';

runMigrations(INVENTORY_SCHEMA, migrations);
