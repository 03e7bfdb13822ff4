import { sql, type Kysely } from 'kysely';

export async function up(db: Kysely<unknown>): Promise<void> {
  await db.schema
    .createTable('paquetes')
    .addColumn('id', 'integer', (c) => c.primaryKey().generatedAlwaysAsIdentity())
    .addColumn('empresa_id', 'integer', (c) => c.notNull())
    .addColumn('sucursal_id', 'integer', (c) => c.notNull())
    .addColumn('usuario_id', 'integer')
    .addColumn('codigo_asesor', 'text', (c) => c.notNull())
    .addColumn('cliente', 'text', (c) => c.notNull())
    .addColumn('wr', 'text', (c) => c.notNull())
    .addColumn('guia', 'text', (c) => c.notNull())
    .addColumn('embalaje', 'text', (c) => c.notNull())
    .addColumn('piezas', 'integer', (c) => c.notNull().check(sql`piezas >= 0`))
    .addColumn('peso', 'numeric(14, 4)', (c) => c.notNull().check(sql`peso >= 0`))
    .addColumn('volumen', 'numeric(14, 4)', (c) => c.check(sql`volumen >= 0`))
    .addColumn('precio', 'numeric(14, 2)', (c) => c.notNull().check(sql`precio >= 0`))
    .addColumn('cuenta_a_terceros', 'numeric(14, 2)', (c) => c.notNull().check(sql`cuenta_a_terceros >= 0`))
    .addColumn('otros', 'numeric(14, 2)', (c) => c.notNull().check(sql`otros >= 0`))
    .addColumn('total', 'numeric(14, 2)', (c) => c.notNull().check(sql`total >= 0`))
    .addColumn('transportista', 'text')
    .addColumn('consignatario', 'text')
    .addColumn('transportador', 'text')
    .addColumn('seguimiento', 'text')
    .addColumn('nota', 'text')
    .addColumn('estado', 'text', (c) => c.notNull().defaultTo('En bodega'))
    .addColumn('created_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    .addColumn('updated_at', 'timestamptz', (c) => c.notNull().defaultTo(sql`now()`))
    // The duplicate rule of imports: concurrent imports of one wr create it once.
    .addUniqueConstraint('paquetes_empresa_wr_key', ['empresa_id', 'wr'])
    .execute();
}
