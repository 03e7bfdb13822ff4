import { AppError } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { insertBodega, insertSucursal } from '../db/lugar.repository';
import type { InventoryDb } from '../db/tables';
import { setLugarActive } from '../flows/set-lugar-active.flow';

/** Back office: branches and warehouses of a company (the admin CLI; the fixture loader uses the seed). */
export function lugarAdminHandlers(db: Kysely<InventoryDb>, options: { countBatch: number }) {
  return {
    'inventory.admin.sucursal.create': async (req: { empresa_id: number; nombre: string; activo: boolean }) => ({
      id: await insertSucursal(db, req.empresa_id, req.nombre, req.activo),
    }),
    'inventory.admin.bodega.create': async (req: { empresa_id: number; id_sucursal: number; nombre: string; activo: boolean }) => {
      const id = await insertBodega(db, req.empresa_id, req.id_sucursal, req.nombre, req.activo);
      if (id === undefined) throw AppError.notFound('recurso_no_encontrado', `La sucursal ${req.id_sucursal} no existe`);
      return { id };
    },
    'inventory.admin.sucursal.set-active': async (req: { empresa_id: number; id: number; activo: boolean }) => {
      const lugar = { table: 'sucursales' as const, empresaId: req.empresa_id, id: req.id, activo: req.activo };
      if (!(await setLugarActive(db, lugar, options.countBatch)))
        throw AppError.notFound('recurso_no_encontrado', `La sucursal ${req.id} no existe`);
      return { id: req.id, activo: req.activo };
    },
    'inventory.admin.bodega.set-active': async (req: { empresa_id: number; id: number; activo: boolean }) => {
      const lugar = { table: 'bodegas' as const, empresaId: req.empresa_id, id: req.id, activo: req.activo };
      if (!(await setLugarActive(db, lugar, options.countBatch)))
        throw AppError.notFound('recurso_no_encontrado', `La bodega ${req.id} no existe`);
      return { id: req.id, activo: req.activo };
    },
  };
}
