import { loadConfig } from '@erp/runtime';
import { harness, type Harness } from '@erp/testing';
import type { Bus } from '@erp/bus';
import { inventorySubjects } from '@erp/contracts';
import type { Kysely } from 'kysely';
import { INVENTORY_SCHEMA, InventoryConfig, inventoryService } from '../src';
import type { InventoryDb } from '../src/db/tables';

/** The inventory service in this process on a harness of its own; `h.db` reads its schema. */
export async function startInventory(label: string, env: Record<string, string> = {}): Promise<Harness<InventoryDb>> {
  const h = await harness<InventoryDb>(label, { schema: INVENTORY_SCHEMA });
  try {
    await h.start((serviceEnv) => inventoryService(loadConfig(InventoryConfig, serviceEnv)), {
      env: { DB_POOL_MAX: '5', REQUEST_TIMEOUT_MS: '5000', ...env },
    });
    return h;
  } catch (err) {
    await h.close();
    throw err;
  }
}

type RefMaps = { sucursales: Record<string, number>; bodegas: Record<string, number>; productos: Record<string, number> };

/** Loads branches, warehouses and products of one company through the back-office subject. */
export async function seedCompany(bus: Bus, empresaId: number, productos: ReadonlyArray<Record<string, unknown>>): Promise<RefMaps> {
  return bus.request(
    inventorySubjects,
    'inventory.admin.seed',
    {
      empresa_id: empresaId,
      sucursales: [
        {
          ref: 'centro',
          nombre: 'Sucursal Centro',
          bodegas: [
            { ref: 'principal', nombre: 'Bodega Principal' },
            { ref: 'reserva', nombre: 'Bodega Reserva' },
          ],
        },
        { ref: 'cerrada', nombre: 'Sucursal Cerrada', activo: false, bodegas: [{ ref: 'vieja', nombre: 'Bodega Vieja' }] },
      ],
      productos: productos as never,
    },
    { requestId: `seed-${empresaId}` },
  );
}

/** Whatever answers the rows of a statement on a database that holds inventory's schema: a harness, the system tests' stack. */
export interface Queryable {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  query<R extends Record<string, any>>(text: string, params?: unknown[]): Promise<R[]>;
}

/** Stock of a product in a warehouse, as inventory stores it (exact decimal text; '0.000' without an entry). */
export async function stockOf(on: Queryable, productoId: number, bodegaId: number): Promise<string> {
  const [row] = await on.query<{ stock: string }>(
    'select stock::text as stock from inventory.inventarios where producto_id = $1 and bodega_id = $2',
    [productoId, bodegaId],
  );
  return row?.stock ?? '0.000';
}

export async function movementsOf(db: Kysely<InventoryDb>, productoId: number) {
  return db
    .selectFrom('movimientos')
    .select(['tipo', 'cantidad', 'stock_resultante', 'clave', 'bodega_id'])
    .where('producto_id', '=', productoId)
    .orderBy('id')
    .execute();
}

/** A product of the fixture by `ref`, its code the ref in capitals, with `stock` in the main warehouse (none when null). */
export const product = (ref: string, stock: number | null, over: Record<string, unknown> = {}) => ({
  ref,
  nombre: `Producto ${ref}`,
  codigo: ref.toUpperCase(),
  precio: '10.50',
  costo_promedio: '4.25',
  inventarios: stock === null ? [] : [{ bodega: 'principal', stock }],
  ...over,
});
