import type { ResolvedProduct } from '@erp/contracts';

export type ProductQuery = { id_producto: number } | { codigo: string };
export type ProductResolution = { ok: true; producto: ResolvedProduct } | { ok: false; message: string };

/**
 * Resolves each query among the company's live products found for the batch: by id; by code,
 * where an exact `codigo` wins over a `barcode`, and a barcode shared by several products is
 * refused as ambiguous.
 */
export function resolveProducts(queries: readonly ProductQuery[], products: readonly ResolvedProduct[]): ProductResolution[] {
  const byId = new Map(products.map((p) => [p.id, p]));
  const byCodigo = new Map(products.map((p) => [p.codigo, p]));
  const byBarcode = new Map<string, ResolvedProduct[]>();
  for (const p of products) if (p.barcode) byBarcode.set(p.barcode, [...(byBarcode.get(p.barcode) ?? []), p]);

  return queries.map((query): ProductResolution => {
    if ('id_producto' in query) {
      const found = byId.get(query.id_producto);
      return found ? { ok: true, producto: found } : { ok: false, message: `El producto ${query.id_producto} no existe` };
    }
    const codigo = query.codigo.trim();
    const exact = byCodigo.get(codigo);
    if (exact) return { ok: true, producto: exact };
    const barcodes = byBarcode.get(codigo) ?? [];
    if (barcodes.length === 1) return { ok: true, producto: barcodes[0]! };
    if (barcodes.length > 1)
      return { ok: false, message: `El código de barras "${codigo}" es ambiguo: lo tienen ${barcodes.length} productos` };
    return { ok: false, message: `No existe un producto con código o código de barras "${codigo}"` };
  });
}

export interface BodegaRow {
  id: number;
  nombre: string;
  activo: boolean;
  sucursal_id: number;
  sucursal_nombre: string;
  sucursal_activo: boolean;
}

export type BodegaCheck =
  { ok: true; id_bodega: number; nombre: string; id_sucursal: number; nombre_sucursal: string } | { ok: false; message: string };

/**
 * A warehouse a sale can move stock in: the company's (another company's reads as missing),
 * active, in an active branch, and in the branch asked for when there is one.
 */
export function checkBodega(id: number, row: BodegaRow | undefined, sucursalId?: number): BodegaCheck {
  if (!row) return { ok: false, message: `La bodega ${id} no existe` };
  if (!row.activo) return { ok: false, message: `La bodega ${id} está inactiva` };
  if (!row.sucursal_activo) return { ok: false, message: `La sucursal de la bodega ${id} está inactiva` };
  if (sucursalId !== undefined && row.sucursal_id !== sucursalId)
    return { ok: false, message: `La bodega ${id} no pertenece a la sucursal ${sucursalId}` };
  return { ok: true, id_bodega: row.id, nombre: row.nombre, id_sucursal: row.sucursal_id, nombre_sucursal: row.sucursal_nombre };
}
