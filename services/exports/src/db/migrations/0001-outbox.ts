import type { Kysely } from 'kysely';
import { createOutboxTables } from '@erp/bus';

export async function up(db: Kysely<unknown>): Promise<void> {
  await createOutboxTables(db);
}
