import type { Kysely } from 'kysely';
import { addOutboxOrder } from '@erp/bus';

export async function up(db: Kysely<unknown>): Promise<void> {
  await addOutboxOrder(db);
}
