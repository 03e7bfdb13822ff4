import type { Kysely } from 'kysely';
import { jsonArrayFrom } from 'kysely/helpers/postgres';
import type { InventoryDb } from './tables';

/** Active branches of a company: few per company, so resolution happens in memory. */
export async function listActiveSucursales(db: Kysely<InventoryDb>, empresaId: number) {
  return db.selectFrom('sucursales').select(['id', 'nombre']).where('empresa_id', '=', empresaId).where('activo', '=', true).execute();
}

/** Active branches of a company with their active warehouses, each by name then id. */
export async function listSucursalesConBodegas(db: Kysely<InventoryDb>, empresaId: number) {
  return db
    .selectFrom('sucursales as s')
    .select((eb) => [
      's.id',
      's.nombre',
      jsonArrayFrom(
        eb
          .selectFrom('bodegas as b')
          .select(['b.id', 'b.nombre'])
          .whereRef('b.sucursal_id', '=', 's.id')
          .where('b.empresa_id', '=', empresaId)
          .where('b.activo', '=', true)
          .orderBy('b.nombre')
          .orderBy('b.id'),
      ).as('bodegas'),
    ])
    .where('s.empresa_id', '=', empresaId)
    .where('s.activo', '=', true)
    .orderBy('s.nombre')
    .orderBy('s.id')
    .execute();
}
