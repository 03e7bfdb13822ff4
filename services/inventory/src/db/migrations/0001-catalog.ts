import { sql, type Kysely } from 'kysely';
import { createOutboxTables } from '@erp/bus';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('sucursales')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addColumn('activo', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await sql`create index sucursales_empresa_nombre_idx on sucursales (empresa_id, lower(btrim(nombre)))`.execute(db);

  await db.schema
    .createTable('bodegas')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('sucursal_id', 'integer', (c) => c.notNull().references('sucursales.id'))
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addColumn('activo', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .execute();
  await db.schema.createIndex('bodegas_empresa_idx').on('bodegas').columns(['empresa_id', 'id']).execute();

  await db.schema
    .createTable('categorias')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addUniqueConstraint('categorias_empresa_nombre_key', ['empresa_id', 'nombre'])
    .execute();

  await db.schema
    .createTable('productos')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('nombre', 'text', (c) => c.notNull())
    .addColumn('descripcion', 'text')
    .addColumn('codigo', 'text', (c) => c.notNull())
    .addColumn('barcode', 'text')
    .addColumn('categoria_id', 'integer', (c) => c.references('categorias.id'))
    .addColumn('marca', 'text')
    .addColumn('tipo', 'text', (c) => c.notNull().check(sql`tipo in ('Producto', 'Servicio')`))
    .addColumn('precio', 'numeric(18, 4)', (c) => c.notNull().check(sql`precio >= 0`))
    .addColumn('costo', 'numeric(18, 4)', (c) => c.notNull().defaultTo(0))
    .addColumn('costo_anterior', 'numeric(18, 4)', (c) => c.notNull().defaultTo(0))
    .addColumn('costo_promedio', 'numeric(18, 4)', (c) => c.notNull().defaultTo(0))
    .addColumn('enable', 'boolean', (c) => c.notNull().defaultTo(true))
    .addColumn('porcentaje_impuesto', 'numeric(5, 2)', (c) => c.check(sql`porcentaje_impuesto between 0 and 100`))
    .addColumn('img', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('deleted_at', 'timestamptz')
    .execute();
  // Every read is scoped by company; codes are unique among a company's live products.
  await db.schema.createIndex('productos_empresa_id_idx').on('productos').columns(['empresa_id', 'id']).execute();
  await sql`create unique index productos_empresa_codigo_key on productos (empresa_id, codigo) where deleted_at is null`.execute(db);
  await sql`create index productos_empresa_barcode_idx on productos (empresa_id, barcode) where barcode is not null and deleted_at is null`.execute(
    db,
  );

  await db.schema
    .createTable('inventarios')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('producto_id', 'integer', (c) => c.notNull().references('productos.id'))
    .addColumn('bodega_id', 'integer', (c) => c.notNull().references('bodegas.id'))
    .addColumn('stock', 'numeric(18, 3)', (c) => c.notNull().defaultTo(0))
    .addColumn('stock_minimo', 'numeric(18, 3)', (c) => c.notNull().defaultTo(0))
    .addColumn('stock_maximo', 'numeric(18, 3)', (c) => c.notNull().defaultTo(0))
    .addColumn('nota', 'text')
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addUniqueConstraint('inventarios_producto_bodega_key', ['producto_id', 'bodega_id'])
    .execute();
  await db.schema.createIndex('inventarios_empresa_bodega_idx').on('inventarios').columns(['empresa_id', 'bodega_id']).execute();

  await createOutboxTables(db);
}
