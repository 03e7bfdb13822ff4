import { runMigrations } from '@erp/runtime';
import { WEBHOOK_INGEST_SCHEMA } from './db/tables';
import { migrations } from './db/migrations';

runMigrations(WEBHOOK_INGEST_SCHEMA, migrations);
