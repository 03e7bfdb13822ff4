import { runMigrations } from '@erp/runtime';
import { migrations } from './db/migrations';
import { GATEWAY_SCHEMA } from './db/tables';

runMigrations(GATEWAY_SCHEMA, migrations);
