import { AppError, type ParsedRequestOf, type TenantContext, type inventorySubjects } from '@erp/contracts';
import { inTransaction, isUniqueViolation } from '@erp/db';
import type { Kysely } from 'kysely';
import { findProductoWithStock } from '../db/producto-read.repository';
import { categoriaIdFor, updateProducto, type ProductoChanges } from '../db/producto.repository';
import type { InventoryDb } from '../db/tables';

type UpdateRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.product.update'>;

export function updateProductHandler(db: Kysely<InventoryDb>) {
  return async ({ id, cambios }: UpdateRequest, ctx: TenantContext) => {
    const empresaId = ctx.empresa.id;
    try {
      await inTransaction(db, async (trx) => {
        const { categoria, enable, ...plain } = cambios;
        const changes: ProductoChanges = Object.fromEntries(Object.entries(plain).filter(([, v]) => v !== undefined));
        if (categoria !== undefined) changes.categoria_id = categoria === null ? null : await categoriaIdFor(trx, empresaId, categoria);
        if (enable !== undefined) changes.enable = enable === 1;
        if (!(await updateProducto(trx, empresaId, id, changes)))
          throw AppError.notFound('producto_no_encontrado', 'Producto no encontrado');
      });
    } catch (err) {
      if (isUniqueViolation(err, 'productos_empresa_codigo_key')) {
        throw new AppError('CONFLICT', `Ya existe un producto con el código ${cambios.codigo}`, {
          'cambios.codigo': ['Ya lo usa otro producto'],
        });
      }
      throw err;
    }
    return (await findProductoWithStock(db, empresaId, id))!;
  };
}
