import { runMigrations } from '@erp/runtime';
import { INVENTORY_SCHEMA } from './service';
import { migrations } from './db/migrations';

runMigrations(INVENTORY_SCHEMA, migrations);
