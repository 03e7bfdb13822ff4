import { runMigrations } from '@erp/runtime';
import { GATEWAY_SCHEMA } from './service';
import { migrations } from './db/migrations';

runMigrations(GATEWAY_SCHEMA, migrations);
