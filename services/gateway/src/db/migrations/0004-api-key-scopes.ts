import { sql, type Kysely } from 'kysely';
import { EVERY_SCOPE } from '@erp/contracts';

/**
 * Keys a company manages itself (interface 1.7.0): a name, scopes, an expiry and the hour and
 * address of the last use. Expand only: keys made before keep working with every scope.
 */
export async function up(db: Kysely<unknown>): Promise<void> {
  const every = sql.raw(`'{${EVERY_SCOPE.join(',')}}'::text[]`);
  await db.schema.alterTable('api_keys').addColumn('nombre', 'text').execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('alcances', sql`text[]`, (c) => c.notNull().defaultTo(every))
    .execute();
  await db.schema.alterTable('api_keys').addColumn('expira_el', 'timestamptz').execute();
  await db.schema.alterTable('api_keys').addColumn('ultimo_uso', 'timestamptz').execute();
  await db.schema.alterTable('api_keys').addColumn('ultima_direccion', 'text').execute();
  await db.schema
    .alterTable('api_keys')
    .addColumn('rotada_a', 'integer', (c) => c.references('api_keys.id'))
    .execute();
  // When the partner event api_key.expiring was recorded for it (once per key).
  await db.schema.alterTable('api_keys').addColumn('aviso_vencimiento', 'timestamptz').execute();
  await db.schema.createIndex('api_keys_empresa_idx').on('api_keys').column('empresa_id').execute();
}
