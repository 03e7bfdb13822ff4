import type { Kysely } from 'kysely';
import type { InventoryDb } from './tables';

/** Active branches of a company: few per company, so resolution happens in memory. */
export async function listActiveSucursales(db: Kysely<InventoryDb>, empresaId: number) {
  return db.selectFrom('sucursales').select(['id', 'nombre']).where('empresa_id', '=', empresaId).where('activo', '=', true).execute();
}
