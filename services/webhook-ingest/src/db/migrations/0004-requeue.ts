import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  // When the delivery's last `delivery.received` event was recorded (stored, replayed or requeued):
  // one still `recibida` long after is owed another event. Existing rows count from now.
  await db.schema
    .alterTable('entregas')
    .addColumn('encolada_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema
    .createIndex('entregas_recibidas_encolada_idx')
    .on('entregas')
    .column('encolada_at')
    .where(sql.ref('estado'), '=', 'recibida')
    .execute();
}
