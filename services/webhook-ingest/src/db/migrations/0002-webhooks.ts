import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('integraciones')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('plataforma', 'text', (c) => c.notNull().check(sql`plataforma in ('woocommerce', 'shopify')`))
    .addColumn('usuario_id', 'integer', (c) => c.notNull())
    .addColumn('sucursal_id', 'integer', (c) => c.notNull())
    .addColumn('bodega_id', 'integer', (c) => c.notNull())
    .addColumn('documento_id', 'integer')
    .addColumn('canal_id', 'integer')
    // SHA-256 of the token: the token itself is shown once and never stored.
    .addColumn('token_hash', 'bytea', (c) => c.notNull().unique())
    .addColumn('token_prefix', 'text', (c) => c.notNull())
    // The platform signs with this secret, so it is kept as given (never logged, never returned).
    .addColumn('secreto', 'text')
    .addColumn('activo', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('integraciones_empresa_idx').on('integraciones').column('empresa_id').execute();

  await db.schema
    .createTable('entregas')
    .addColumn('id', 'serial', (c) => c.primaryKey())
    .addColumn('integracion_id', 'integer', (c) => c.notNull().references('integraciones.id'))
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('plataforma', 'text', (c) => c.notNull())
    .addColumn('recurso', 'text', (c) => c.notNull().check(sql`recurso in ('pedido', 'producto')`))
    .addColumn('tema', 'text')
    .addColumn('clave_dedup', 'text', (c) => c.notNull())
    .addColumn('referencia', 'text')
    .addColumn('headers', 'jsonb', (c) => c.notNull())
    .addColumn('cuerpo', 'bytea', (c) => c.notNull())
    .addColumn('estado', 'text', (c) =>
      c
        .notNull()
        .defaultTo('recibida')
        .check(sql`estado in ('recibida', 'procesada', 'ignorada', 'fallida')`),
    )
    .addColumn('motivo', 'text')
    .addColumn('intentos', 'integer', (c) => c.notNull().defaultTo(0))
    .addColumn('id_venta', 'integer')
    .addColumn('recibida_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('procesada_at', 'timestamptz')
    .addUniqueConstraint('entregas_dedup_uq', ['integracion_id', 'clave_dedup'])
    .execute();
  await db.schema.createIndex('entregas_estado_idx').on('entregas').columns(['estado', 'empresa_id', 'id']).execute();

  // What we know of each platform order: the newest version applied, its sale, and whether it was
  // cancelled (terminal: a stale or repeated delivery never brings a cancelled order back).
  await db.schema
    .createTable('pedidos')
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('referencia', 'text', (c) => c.notNull())
    .addColumn('estado_plataforma', 'text')
    .addColumn('version', 'timestamptz')
    .addColumn('id_venta', 'integer')
    .addColumn('cancelado', 'boolean', (c) => c.notNull().defaultTo(false))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('pedidos_pk', ['empresa_id', 'referencia'])
    .execute();

  // Platform product (or variant) id → our product; `version` orders product updates.
  await db.schema
    .createTable('mapeos_producto')
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('plataforma', 'text', (c) => c.notNull())
    .addColumn('id_externo', 'text', (c) => c.notNull())
    .addColumn('producto_id', 'integer', (c) => c.notNull())
    .addColumn('version', 'timestamptz')
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addPrimaryKeyConstraint('mapeos_producto_pk', ['empresa_id', 'plataforma', 'id_externo'])
    .execute();
}
