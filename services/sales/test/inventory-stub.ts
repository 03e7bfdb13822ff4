import type { inventorySubjects, ReplyInputOf } from '@erp/contracts';

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
