import type { ResolvedProduct } from '@erp/contracts';
import { checkBodega, resolveProducts, type BodegaRow } from './resolve-product';

const product = (id: number, codigo: string, barcode: string | null = null): ResolvedProduct => ({
  id,
  codigo,
  barcode,
  nombre: `P${id}`,
  descripcion: null,
  marca: null,
  tipo: 'Producto',
  enable: 1,
  precio: '1.0000',
  costo: '0',
  costo_promedio: '0',
  porcentaje_impuesto: null,
  stock: null,
});

describe('resolveProducts', () => {
  const products = [product(1, 'A-1', '7701'), product(2, '7701'), product(3, 'C-3', '7799'), product(4, 'D-4', '7799')];

  it('answers one resolution per query, in order, by id or by code', () => {
    const sut = resolveProducts([{ id_producto: 3 }, { codigo: 'A-1' }, { id_producto: 99 }], products);
    expect(sut.map((r) => (r.ok ? r.producto.id : r.message))).toEqual([3, 1, 'El producto 99 no existe']);
  });

  it('prefers an exact codigo over a barcode, and refuses a barcode shared by several products', () => {
    const sut = resolveProducts([{ codigo: '7701' }, { codigo: '7799' }, { codigo: ' 7701 ' }, { codigo: 'nope' }], products);
    expect(sut[0]).toMatchObject({ ok: true, producto: { id: 2 } });
    expect(sut[1]).toEqual({ ok: false, message: 'El código de barras "7799" es ambiguo: lo tienen 2 productos' });
    expect(sut[2]).toMatchObject({ ok: true, producto: { id: 2 } });
    expect(sut[3]).toEqual({ ok: false, message: 'No existe un producto con código o código de barras "nope"' });
  });
});

describe('checkBodega', () => {
  const row: BodegaRow = { id: 5, nombre: 'Principal', activo: true, sucursal_id: 2, sucursal_nombre: 'Centro', sucursal_activo: true };

  it('accepts an active warehouse of an active branch, in the branch asked for', () => {
    expect(checkBodega(5, row, 2)).toEqual({ ok: true, id_bodega: 5, nombre: 'Principal', id_sucursal: 2, nombre_sucursal: 'Centro' });
  });

  it('refuses a missing (or another company’s), inactive, or other-branch warehouse', () => {
    expect(checkBodega(5, undefined)).toEqual({ ok: false, message: 'La bodega 5 no existe' });
    expect(checkBodega(5, { ...row, activo: false })).toMatchObject({ ok: false, message: 'La bodega 5 está inactiva' });
    expect(checkBodega(5, { ...row, sucursal_activo: false })).toMatchObject({ ok: false });
    expect(checkBodega(5, row, 3)).toEqual({ ok: false, message: 'La bodega 5 no pertenece a la sucursal 3' });
  });
});
