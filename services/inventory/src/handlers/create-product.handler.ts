import type { ParsedRequestOf, TenantContext, inventorySubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import { categoriaIdFor, findLiveProductoId, insertProducto } from '../db/producto.repository';
import type { InventoryDb } from '../db/tables';

type CreateRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.product.create'>;

export function createProductHandler(db: Kysely<InventoryDb>) {
  return async (req: CreateRequest, ctx: TenantContext) =>
    inTransaction(db, async (trx) => {
      const empresaId = ctx.empresa.id;
      const existing = await findLiveProductoId(trx, empresaId, req.codigo);
      if (existing !== undefined) return { id: existing, creado: false };
      const id = await insertProducto(trx, empresaId, {
        nombre: req.nombre,
        descripcion: req.descripcion ?? null,
        codigo: req.codigo,
        barcode: req.barcode ?? null,
        categoria_id: req.categoria ? await categoriaIdFor(trx, empresaId, req.categoria) : null,
        marca: req.marca ?? null,
        tipo: req.tipo,
        precio: req.precio,
        costo: req.costo ?? '0',
        costo_anterior: req.costo_anterior ?? '0',
        costo_promedio: req.costo_promedio ?? req.costo ?? '0',
        porcentaje_impuesto: req.porcentaje_impuesto ?? null,
        img: req.img ?? null,
        enable: req.enable !== 0,
      });
      if (id !== undefined) return { id, creado: true };
      return { id: (await findLiveProductoId(trx, empresaId, req.codigo))!, creado: false };
    });
}
