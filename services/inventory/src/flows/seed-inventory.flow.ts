import { AppError, type ParsedRequestOf, type inventorySubjects } from '@erp/contracts';
import type { Insertable, Transaction } from 'kysely';
import { insertBodega, insertSucursal } from '../db/lugar.repository';
import { categoriaIdFor } from '../db/producto.repository';
import { insertInventario, insertMovimientos, insertSeedProducto } from '../db/seed.repository';
import type { InventoryDb } from '../db/tables';

export type SeedRequest = ParsedRequestOf<typeof inventorySubjects, 'inventory.admin.seed'>;

/**
 * Loads a company's branches, warehouses, categories, products and stock in the caller's
 * transaction; answers the ids given to each `ref`.
 */
export async function seedInventory(trx: Transaction<InventoryDb>, req: SeedRequest) {
  const { sucursales, bodegas } = await seedLugares(trx, req);
  const productos = await seedProductos(trx, req, bodegas);
  return { sucursales, bodegas, productos };
}

async function seedLugares(trx: Transaction<InventoryDb>, req: SeedRequest) {
  const sucursales: Record<string, number> = {};
  const bodegas: Record<string, number> = {};
  for (const s of req.sucursales) {
    const id = await insertSucursal(trx, req.empresa_id, s.nombre, s.activo);
    sucursales[s.ref] = id;
    for (const b of s.bodegas) {
      if (bodegas[b.ref] !== undefined) throw AppError.validation(`La bodega "${b.ref}" está repetida`);
      bodegas[b.ref] = (await insertBodega(trx, req.empresa_id, id, b.nombre, b.activo))!;
    }
  }
  return { sucursales, bodegas };
}

async function seedProductos(trx: Transaction<InventoryDb>, req: SeedRequest, bodegas: Record<string, number>) {
  const empresaId = req.empresa_id;
  const productos: Record<string, number> = {};
  // Initial stock enters through the ledger like every other change: stock = Σ movements from the start.
  const openings: Insertable<InventoryDb['movimientos']>[] = [];
  const categoriaIds = new Map<string, number>();
  for (const nombre of new Set(req.productos.flatMap((p) => (p.categoria ? [p.categoria] : [])))) {
    categoriaIds.set(nombre, await categoriaIdFor(trx, empresaId, nombre));
  }

  for (const p of req.productos) {
    const id = await insertSeedProducto(trx, {
      empresa_id: empresaId,
      nombre: p.nombre,
      descripcion: p.descripcion ?? null,
      codigo: p.codigo,
      barcode: p.barcode ?? null,
      categoria_id: p.categoria ? categoriaIds.get(p.categoria)! : null,
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
    });
    productos[p.ref] = id;
    for (const inv of p.inventarios) {
      const bodegaId = bodegas[inv.bodega];
      if (bodegaId === undefined) throw AppError.validation(`El producto "${p.ref}" usa la bodega desconocida "${inv.bodega}"`);
      await insertInventario(trx, {
        empresa_id: empresaId,
        producto_id: id,
        bodega_id: bodegaId,
        stock: inv.stock,
        stock_minimo: inv.stock_minimo,
        stock_maximo: inv.stock_maximo,
        nota: inv.nota ?? null,
      });
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
  await insertMovimientos(trx, openings);
  return productos;
}
