import { sql, type Kysely } from 'kysely';
import { createOutboxTables } from '@erp/bus';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('empresas')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('clave', 'text', (c) => c.unique())
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addColumn('activo', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('vender_sin_stock', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('iva', 'numeric(5, 2)', (c) =>
      c
        .notNull()
        .defaultTo(13)
        .check(sql`iva between 0 and 100`),
    )
    .addColumn('seed_refs', 'jsonb', (c) => c.notNull().defaultTo(sql`'{}'::jsonb`))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();

  await db.schema
    .createTable('usuarios')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull().references('empresas.id'))
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addColumn('rol', 'text', (c) => c.notNull().check(sql`rol in ('Administrador', 'Supervisor', 'Vendedor')`))
    .addColumn('codigo', 'text')
    .addColumn('activo', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('usuarios_empresa_idx').on('usuarios').columns(['empresa_id', 'id']).execute();

  await db.schema
    .createTable('api_keys')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull().references('empresas.id'))
    .addColumn('usuario_id', 'integer', (c) => c.references('usuarios.id'))
    .addColumn('key_hash', 'bytea', (c) => c.notNull().unique())
    .addColumn('prefix', 'text', (c) => c.notNull())
    .addColumn('activo', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('revoked_at', 'timestamptz')
    .execute();

  await createOutboxTables(db);
}
