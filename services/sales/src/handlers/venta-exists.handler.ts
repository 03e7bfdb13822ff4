import type { Kysely } from 'kysely';
import type { SalesDb } from '../db/tables';
import { ventaExistsWithClave } from '../db/venta-read.repository';

/**
 * Whether a committed sale holds this reservation key: inventory's sweeper confirms the
 * reservation when it does and releases it when it does not.
 */
export function ventaExistsHandler(db: Kysely<SalesDb>) {
  return async ({ empresa_id, clave }: { empresa_id: number; clave: string }) => ({
    exists: await ventaExistsWithClave(db, empresa_id, clave),
  });
}
