import { AppError, type ParsedRequestOf, type inventorySubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Insertable, Kysely } from 'kysely';
import type { InventoryDb } from '../db/tables';

type SeedRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.admin.seed'>;

/** Back office: loads a company's branches, warehouses, categories, products and stock at once. */
export function seedHandler(db: Kysely<InventoryDb>) {
  return async (req: SeedRequest) =>
    inTransaction(db, async (trx) => {
      const empresaId = req.empresa_id;
      const sucursales: Record<string, number> = {};
      const bodegas: Record<string, number> = {};
      const productos: Record<string, number> = {};

      for (const s of req.sucursales) {
        const { id } = await trx
          .insertInto('sucursales')
          .values({ empresa_id: empresaId, nombre: s.nombre, activo: s.activo })
          .returning('id')
          .executeTakeFirstOrThrow();
        sucursales[s.ref] = id;
        for (const b of s.bodegas) {
          if (bodegas[b.ref] !== undefined) throw AppError.validation(`La bodega "${b.ref}" está repetida`);
          const row = await trx
            .insertInto('bodegas')
            .values({ empresa_id: empresaId, sucursal_id: id, nombre: b.nombre, activo: b.activo })
            .returning('id')
            .executeTakeFirstOrThrow();
          bodegas[b.ref] = row.id;
        }
      }

      // Initial stock enters through the ledger like every other change: stock = Σ movements from the start.
      const openings: Insertable<InventoryDb['movimientos']>[] = [];
      const categoryIds = new Map<string, number>();
      for (const nombre of new Set(req.productos.flatMap((p) => (p.categoria ? [p.categoria] : [])))) {
        const row = await trx
          .insertInto('categorias')
          .values({ empresa_id: empresaId, nombre })
          .onConflict((oc) => oc.columns(['empresa_id', 'nombre']).doUpdateSet({ nombre }))
          .returning('id')
          .executeTakeFirstOrThrow();
        categoryIds.set(nombre, row.id);
      }

      for (const p of req.productos) {
        const { id } = await trx
          .insertInto('productos')
          .values({
            empresa_id: empresaId,
            nombre: p.nombre,
            descripcion: p.descripcion ?? null,
            codigo: p.codigo,
            barcode: p.barcode ?? null,
            categoria_id: p.categoria ? categoryIds.get(p.categoria)! : null,
            marca: p.marca ?? null,
            tipo: p.tipo,
            precio: p.precio,
            costo: p.costo,
            costo_anterior: p.costo_anterior,
            costo_promedio: p.costo_promedio,
            enable: p.enable === 1,
            porcentaje_impuesto: p.porcentaje_impuesto ?? null,
            img: p.img ?? null,
            deleted_at: null,
          })
          .returning('id')
          .executeTakeFirstOrThrow();
        productos[p.ref] = id;
        for (const inv of p.inventarios) {
          const bodegaId = bodegas[inv.bodega];
          if (bodegaId === undefined) throw AppError.validation(`El producto "${p.ref}" usa la bodega desconocida "${inv.bodega}"`);
          await trx
            .insertInto('inventarios')
            .values({
              empresa_id: empresaId,
              producto_id: id,
              bodega_id: bodegaId,
              stock: inv.stock,
              stock_minimo: inv.stock_minimo,
              stock_maximo: inv.stock_maximo,
              nota: inv.nota ?? null,
            })
            .execute();
          if (Number(inv.stock) !== 0) {
            openings.push({
              empresa_id: empresaId,
              producto_id: id,
              bodega_id: bodegaId,
              tipo: 'inventario_inicial',
              cantidad: inv.stock,
              stock_resultante: inv.stock,
              origen: 'inventario',
              clave: null,
              concepto: 'Inventario inicial',
            });
          }
        }
      }
      for (let i = 0; i < openings.length; i += 1000) await trx.insertInto('movimientos').values(openings.slice(i, i + 1000)).execute();
      return { sucursales, bodegas, productos };
    });
}
