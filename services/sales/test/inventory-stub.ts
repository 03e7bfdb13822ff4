import type { Bus, Handlers } from '@erp/bus';
import { inventorySubjects, type ReplyInputOf } from '@erp/contracts';

type Resolved = ReplyInputOf<typeof inventorySubjects, 'inventory.product.resolve'>;
type Reserva = ReplyInputOf<typeof inventorySubjects, 'inventory.stock.reserve'>;

/** The warehouse the stubs of inventory resolve every sale to. */
export const STUB_BODEGA = { ok: true as const, id_bodega: 2, nombre: 'Principal', id_sucursal: 1, nombre_sucursal: 'Centro' };

/** A product as the stubs of inventory resolve it: a good without stock of its own, priced 11.30 unless told. */
export function stubProducto(id: number, fields: { codigo?: string; nombre?: string; precio?: string } = {}): Resolved['items'][number] {
  return {
    ok: true as const,
    producto: {
      id,
      codigo: fields.codigo ?? `P-${id}`,
      barcode: null,
      nombre: fields.nombre ?? `Producto ${id}`,
      descripcion: null,
      marca: null,
      tipo: 'Producto' as const,
      enable: 1 as const,
      precio: fields.precio ?? '11.30',
      costo: '5',
      costo_promedio: '5',
      porcentaje_impuesto: null,
      stock: null,
    },
  };
}

/** A reservation of a sale as the stubs of inventory answer it, already applied. */
export function stubReserva(clave: string, estado: 'reservada' | 'liberada', idBodega: number, at: string): Reserva {
  return { clave, estado, origen: 'venta' as const, id_bodega: idBodega, lineas: [], aplicado: true, created_at: at, updated_at: at };
}

const calledBySales = {
  'inventory.sucursal.resolve': inventorySubjects['inventory.sucursal.resolve'],
  'inventory.product.resolve': inventorySubjects['inventory.product.resolve'],
  'inventory.stock.reserve': inventorySubjects['inventory.stock.reserve'],
  'inventory.stock.reserve-many': inventorySubjects['inventory.stock.reserve-many'],
  'inventory.stock.release': inventorySubjects['inventory.stock.release'],
  'inventory.stock.adjust': inventorySubjects['inventory.stock.adjust'],
};

/**
 * Inventory as sales calls it, stood in on `bus`: every branch is branch 1 (Centro), every product
 * exists in STUB_BODEGA at 11.30, reservations and releases apply, adjustments apply and leave no
 * stock. `handlers` replace the answers a test needs otherwise.
 */
export function serveInventory(bus: Bus, handlers: Partial<Handlers<typeof calledBySales>> = {}): void {
  const now = new Date().toISOString();
  bus.serve(
    calledBySales,
    {
      'inventory.sucursal.resolve': async ({ items }) => items.map(() => ({ ok: true as const, id_sucursal: 1, nombre: 'Centro' })),
      'inventory.product.resolve': async ({ items }) => ({
        bodega: STUB_BODEGA,
        items: items.map((item) => stubProducto('id_producto' in item ? item.id_producto : 5)),
      }),
      'inventory.stock.reserve': async (req) => stubReserva(req.clave, 'reservada', req.id_bodega, now),
      'inventory.stock.reserve-many': async ({ reservas }) => ({
        resultados: reservas.map((r) => ({ clave: r.clave, reserva: stubReserva(r.clave, 'reservada', r.id_bodega, now) })),
      }),
      'inventory.stock.release': async ({ clave }) => stubReserva(clave, 'liberada', 2, now),
      'inventory.stock.adjust': async ({ clave, lineas }) => ({
        clave,
        aplicado: true,
        movimientos: lineas.map((l) => ({
          id_producto: l.id_producto,
          id_bodega: l.id_bodega,
          cantidad: l.cantidad!,
          stock_resultante: '0.000',
        })),
      }),
      ...handlers,
    },
    { queue: 'inventory' },
  );
}
