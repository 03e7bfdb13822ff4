import type { ResolvedProduct } from '@erp/contracts';

/** A product as inventory resolves it for a sale's plan: `over` sets what a test needs. */
export const resolvedProduct = (id: number, over: Partial<ResolvedProduct> = {}): ResolvedProduct => ({
  id,
  codigo: `P-${id}`,
  barcode: null,
  nombre: `Producto ${id}`,
  descripcion: null,
  marca: null,
  tipo: 'Producto',
  enable: 1,
  precio: '11.30',
  costo: '5',
  costo_promedio: '5.5',
  porcentaje_impuesto: null,
  stock: '10',
  ...over,
});
