import { AppError } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { insertBodega, insertSucursal, setActive } from '../db/location.repository';
import type { InventoryDb } from '../db/tables';

/** Back office: branches and warehouses of a company (the admin CLI; the fixture loader uses the seed). */
export function locationAdminHandlers(db: Kysely<InventoryDb>) {
  return {
    'inventory.admin.sucursal.create': async (req: { empresa_id: number; nombre: string; activo: boolean }) => ({
      id: await insertSucursal(db, req.empresa_id, req.nombre, req.activo),
    }),
    'inventory.admin.bodega.create': async (req: { empresa_id: number; id_sucursal: number; nombre: string; activo: boolean }) => {
      const id = await insertBodega(db, req.empresa_id, req.id_sucursal, req.nombre, req.activo);
      if (id === undefined) throw AppError.notFound(`La sucursal ${req.id_sucursal} no existe`);
      return { id };
    },
    'inventory.admin.sucursal.set-active': async (req: { empresa_id: number; id: number; activo: boolean }) => {
      if (!(await setActive(db, 'sucursales', req.empresa_id, req.id, req.activo))) throw AppError.notFound(`La sucursal ${req.id} no existe`);
      return { id: req.id, activo: req.activo };
    },
    'inventory.admin.bodega.set-active': async (req: { empresa_id: number; id: number; activo: boolean }) => {
      if (!(await setActive(db, 'bodegas', req.empresa_id, req.id, req.activo))) throw AppError.notFound(`La bodega ${req.id} no existe`);
      return { id: req.id, activo: req.activo };
    },
  };
}
