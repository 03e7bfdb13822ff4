import { sql, type Kysely } from 'kysely';

/**
 * Partners' subscriptions, each company's event log and the deliveries.
 * `eventos.posicion` is the feed's order: rows are inserted under one advisory lock, so positions
 * commit in increasing order and a reader paging by position never skips one committed later.
 * `eventos.orden` is the order of the source events on the stream: deliveries of one resource
 * (`recurso`) to one subscription go out in that order.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('suscripciones')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('url', 'text', (c) => c.notNull())
    .addColumn('eventos', sql`text[]`, (c) => c.notNull())
    .addColumn('descripcion', 'text')
    // `whsec_<base64>`: kept in clear because every delivery is signed with it.
    .addColumn('secreto', 'text', (c) => c.notNull())
    .addColumn('enable', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('motivo_deshabilitada', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index suscripciones_empresa_idx on suscripciones (empresa_id, id)`.execute(db);

  await db.schema
    .createTable('eventos')
    .addColumn('posicion', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('id', 'text', (c) => c.notNull().unique())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('tipo', 'text', (c) => c.notNull())
    .addColumn('recurso', 'text', (c) => c.notNull())
    .addColumn('orden', 'bigint', (c) => c.notNull())
    .addColumn('ocurrido_at', 'timestamptz', (c) => c.notNull())
    .addColumn('data', 'jsonb', (c) => c.notNull())
    .execute();
  await sql`create index eventos_empresa_posicion_idx on eventos (empresa_id, posicion)`.execute(db);
  await sql`create index eventos_empresa_ocurrido_idx on eventos (empresa_id, ocurrido_at)`.execute(db);

  // What is still owed to a subscription: one row per event, retried until delivered.
  await db.schema
    .createTable('entregas')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('suscripcion_id', 'integer', (c) => c.notNull().references('suscripciones.id').onDelete('cascade'))
    .addColumn('evento_id', 'text', (c) => c.notNull().references('eventos.id').onDelete('cascade'))
    .addColumn('recurso', 'text', (c) => c.notNull())
    .addColumn('orden', 'bigint', (c) => c.notNull())
    .addColumn('estado', 'text', (c) =>
      c
        .notNull()
        .defaultTo('pendiente')
        .check(sql`estado in ('pendiente', 'entregada')`),
    )
    .addColumn('intentos', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('proximo_intento_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // A process sending it holds it until then; past it (the process died) another may send it.
    .addColumn('tomada_hasta', 'timestamptz')
    .addColumn('primer_fallo_at', 'timestamptz')
    .addColumn('entregada_at', 'timestamptz')
    .addUniqueConstraint('entregas_suscripcion_evento_key', ['suscripcion_id', 'evento_id'])
    .execute();
  await sql`create index entregas_pendientes_idx on entregas (proximo_intento_at) where estado = 'pendiente'`.execute(db);
  await sql`create index entregas_recurso_idx on entregas (suscripcion_id, recurso, orden) where estado = 'pendiente'`.execute(db);

  await db.schema
    .createTable('intentos')
    .addColumn('id', 'bigint', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('suscripcion_id', 'integer', (c) => c.notNull().references('suscripciones.id').onDelete('cascade'))
    .addColumn('evento_id', 'text', (c) => c.notNull())
    .addColumn('tipo', 'text', (c) => c.notNull())
    .addColumn('intento', 'integer', (c) => c.notNull())
    .addColumn('status', 'integer')
    .addColumn('error', 'text')
    .addColumn('duracion_ms', 'integer', (c) => c.notNull())
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index intentos_suscripcion_idx on intentos (suscripcion_id, id)`.execute(db);
}
