import { SaleUpdateBody, type ResolvedProduct, type TenantContext } from '@erp/contracts';
import { resolvedProduct } from '../../test/resolved-product';
import { planDraft, type VentaDraft, type VentaResolutions } from './venta-plan';
import { documentoEmisor, mergeUpdate, needsCreditCheck, updateRefusal, type StoredVenta } from './venta-update';

const stored = (over: Partial<StoredVenta> = {}): StoredVenta => ({
  id: 40,
  estado: 'Pendiente',
  documento_fiscal_emitido: false,
  referencia_externa: 'ORD-9',
  fecha: '2026-03-01',
  fecha_expiracion: null,
  forma_pago: 'Crédito',
  observaciones: 'Entregar en bodega',
  sucursal_id: 1,
  bodega_id: 2,
  documento_id: 3,
  documento_emisor_id: null,
  canal_id: 4,
  cliente_id: 5,
  usuario_id: 6,
  nombre_usuario: 'Ana',
  monto_pago: '10.00',
  cambio: '0.00',
  saldo: '12.60',
  revision_stock: 0,
  devoluciones_activas: 0,
  lines: [
    {
      id: 100,
      id_producto: 7,
      cantidad: '2.0000',
      precio: '9.9900',
      descuento: '1.00',
      porcentaje_impuesto: '13.0000',
      id_presentacion: null,
      mueve_stock: true,
    },
    {
      id: 101,
      id_producto: 8,
      cantidad: '1.0000',
      precio: '5.0000',
      descuento: '0.00',
      porcentaje_impuesto: '0.0000',
      id_presentacion: 3,
      mueve_stock: true,
    },
  ],
  ...over,
});

const body = (input: unknown) => SaleUpdateBody.parse(input);
const merge = (changes: unknown, venta = stored()) => mergeUpdate(venta, body(changes), { id: 99, nombre: 'Quien edita' });
const draftOf = (changes: unknown, venta = stored()): VentaDraft => {
  const sut = merge(changes, venta);
  if (!sut.ok) throw new Error(JSON.stringify(sut.details));
  return sut.draft;
};

describe('updateRefusal', () => {
  const venta = (over: Partial<Pick<StoredVenta, 'estado' | 'documento_fiscal_emitido' | 'devoluciones_activas'>>) => ({
    estado: 'Pendiente' as const,
    documento_fiscal_emitido: false,
    devoluciones_activas: 0,
    ...over,
  });

  it('lets Pendiente sales and quotations without a fiscal document through', () => {
    expect(updateRefusal(venta({}))).toBeUndefined();
    expect(updateRefusal(venta({ estado: 'Cotizacion' }))).toBeUndefined();
  });

  it('names the reason: annulled, fiscal document emitted, or a state that cannot change', () => {
    expect(updateRefusal(venta({ estado: 'Anulada', documento_fiscal_emitido: true }))).toEqual({
      field: 'estado',
      message: 'La venta está anulada y no se puede modificar',
    });
    expect(updateRefusal(venta({ documento_fiscal_emitido: true }))).toEqual({
      field: 'documento_fiscal_emitido',
      message: 'La venta tiene un documento fiscal emitido y no se puede modificar',
    });
    expect(updateRefusal(venta({ estado: 'Completada' }))?.message).toBe(
      'La venta está en estado Completada: solo se pueden modificar ventas en estado Pendiente o Cotizacion',
    );
  });

  it('refuses a sale with active returns: they gave back stock of its lines', () => {
    expect(updateRefusal(venta({ devoluciones_activas: 1 }))).toEqual({
      field: 'detalles',
      message: 'La venta tiene devoluciones activas y no se puede modificar',
    });
  });
});

describe('mergeUpdate', () => {
  it('keeps every omitted field, the lines with their prices and the user who issued the sale', () => {
    expect(draftOf({})).toEqual({
      estado: 'Pendiente',
      referencia: 'ORD-9',
      fecha: '2026-03-01',
      fecha_expiracion: null,
      forma_pago: 'Crédito',
      observaciones: 'Entregar en bodega',
      sucursal: { id_sucursal: 1 },
      id_bodega: 2,
      id_documento: 3,
      id_canal: 4,
      id_cliente: 5,
      monto_pago: '10.00',
      cambio: '0.00',
      usuario: { id: 6, nombre: 'Ana' },
      detalles: [
        {
          id: 100,
          producto: { id_producto: 7 },
          cantidad: '2.0000',
          descuento: '1.00',
          kept: { id_producto: 7, precio: '9.9900', porcentaje_impuesto: '13.0000', id_presentacion: null },
        },
        {
          id: 101,
          producto: { id_producto: 8 },
          cantidad: '1.0000',
          descuento: '0.00',
          kept: { id_producto: 8, precio: '5.0000', porcentaje_impuesto: '0.0000', id_presentacion: 3 },
        },
      ],
    });
  });

  it('applies what is sent, clears what is sent as null and stores Pre-venta as a quotation', () => {
    const sut = draftOf({
      estado: 'Pre-venta',
      id_cliente: null,
      observaciones: null,
      forma_pago: '',
      fecha_expiracion: '2026-04-01',
      sucursal: 'Norte',
      id_bodega: 9,
      cambio: 0.5,
    });
    expect(sut).toMatchObject({
      estado: 'Cotizacion',
      id_cliente: null,
      observaciones: null,
      forma_pago: null,
      fecha_expiracion: '2026-04-01',
      sucursal: { sucursal: 'Norte' },
      id_bodega: 9,
      cambio: '0.5',
    });
  });

  it('defaults monto_pago to the total again when the sale is sent as Pagada without an amount', () => {
    expect(draftOf({ estado: 'Pagada' }).monto_pago).toBeUndefined();
    expect(draftOf({ estado: 'Pagada', monto_pago: 3 }).monto_pago).toBe('3');
  });

  it('replaces the lines: an id of the sale in place (keeping what it omits), a line without id added, the rest removed', () => {
    const sut = draftOf({
      detalles: [
        { id: 101, cantidad: 4 },
        { id_producto: 9, cantidad: 1, precio: 2 },
      ],
    });
    expect(sut.detalles).toEqual([
      {
        id: 101,
        kept: { id_producto: 8, precio: '5.0000', porcentaje_impuesto: '0.0000', id_presentacion: 3 },
        producto: { id_producto: 8 },
        cantidad: '4',
        precio: undefined,
        descuento: '0.00',
        porcentaje_impuesto: undefined,
        id_presentacion: undefined,
      },
      {
        producto: { id_producto: 9 },
        cantidad: '1',
        precio: '2',
        descuento: '0',
        porcentaje_impuesto: undefined,
        id_presentacion: undefined,
      },
    ]);
  });

  it('refuses an id that is not a line of this sale, naming the line', () => {
    const sut = merge({
      detalles: [
        { id: 100, cantidad: 1 },
        { id: 555, id_producto: 7, cantidad: 1 },
      ],
    });
    expect(sut).toEqual({ ok: false, details: { 'detalles.1.id': ['La línea 555 no pertenece a esta venta'] } });
  });

  it('checks the rules between fields on the sale as it would be', () => {
    const quote = stored({ estado: 'Cotizacion', canal_id: null, cliente_id: null });
    expect(merge({ estado: 'Completada' }, quote)).toEqual({
      ok: false,
      details: { id_canal: ['Es obligatorio salvo cuando el estado es Cotizacion'] },
    });
    expect(merge({ estado: 'Pendiente', id_canal: 4 }, quote)).toEqual({
      ok: false,
      details: { id_cliente: ['Es obligatorio cuando el estado es Pendiente'] },
    });
    expect(merge({ cotizacion: true })).toEqual({
      ok: false,
      details: { cotizacion: ['Solo puede ser true cuando el estado es Cotizacion'] },
    });
    expect(merge({ fecha: '2026-05-01' }, stored({ fecha_expiracion: '2026-04-01' }))).toEqual({
      ok: false,
      details: { fecha: ['La fecha de expiración (2026-04-01) no puede ser anterior a la fecha (2026-05-01)'] },
    });
  });

  it('leaves to the body schema what the body alone decides', () => {
    const problems = SaleUpdateBody.safeParse({
      estado: 'Pendiente',
      id_cliente: null,
      cotizacion: true,
      detalles: [{ id: 1, cantidad: 1 }, { id: 1, cantidad: 2 }, { cantidad: 1 }],
    });
    expect(problems.success).toBe(false);
    expect(problems.error!.issues.map((i) => [i.path.join('.'), i.message])).toEqual([
      ['detalles.2.id_producto', 'Debe indicar id_producto o codigo_producto (o el id de una línea de la venta)'],
      ['cotizacion', 'Solo puede ser true cuando el estado es Cotizacion o Pre-venta'],
      ['id_cliente', 'Es obligatorio cuando el estado es Pendiente'],
      ['detalles.1.id', 'La línea 1 aparece más de una vez'],
    ]);
  });
});

describe('planDraft of an update', () => {
  const product = (id: number, over: Partial<ResolvedProduct> = {}) =>
    resolvedProduct(id, { precio: '20.00', costo_promedio: '5', stock: null, ...over });
  const ctx: TenantContext = {
    requestId: 'r',
    empresa: { id: 1, nombre: 'E', iva: '13', venderSinStock: true },
    usuario: { id: 99, nombre: 'Quien edita' },
  };
  const found = (productos: ResolvedProduct[]): VentaResolutions => ({
    sucursal: { ok: true, value: { id: 1, nombre: 'Centro' } },
    bodega: { ok: true, value: { id: 2, nombre: 'Principal', id_sucursal: 1 } },
    productos: productos.map((p) => ({ ok: true as const, value: p })),
    documento: { id: 3, sucursal_id: 1, nombre: 'Factura', prefijo: 'F-', correlativo: 5, activo: true, solo_cotizacion: false },
    canal: { id: 4, nombre: 'Tienda', activo: true },
    cliente: { id: 5, nombre: 'Juan', limite_credito: '0', activo: true },
  });

  it('keeps a kept line’s price and rate even if the product’s changed since, and prices a new product at its own', () => {
    const sut = planDraft(
      draftOf({
        detalles: [
          { id: 100, cantidad: 3 },
          { id: 101, id_producto: 9, cantidad: 1 },
        ],
      }),
      ctx,
      found([product(7), product(9, { porcentaje_impuesto: '5' })]),
    );
    expect(sut.ok).toBe(true);
    if (!sut.ok) return;
    expect(
      sut.plan.lines.map((l) => [l.lineId, l.producto.id, l.precio, l.porcentaje_impuesto, l.descuento, l.id_presentacion, l.total]),
    ).toEqual([
      [100, 7, '9.99', '13', '1.00', null, '28.97'],
      // Another product: the old line's presentation does not follow it.
      [101, 9, '20', '5', '0.00', null, '20.00'],
    ]);
    // Pendiente owes what was not paid: 48.97 − 10.00.
    expect(sut.plan.payment).toEqual({ monto_pago: '10.00', cambio: '0.00', saldo: '38.97' });
    expect(sut.plan.usuario).toEqual({ id: 6, nombre: 'Ana' });
  });
});

describe('needsCreditCheck', () => {
  const before = { estado: 'Pendiente' as const, cliente_id: 5, saldo: '100.00' };
  it('checks a sale that becomes Pendiente, changes customer, or owes more', () => {
    expect(needsCreditCheck({ ...before, estado: 'Cotizacion' }, { estado: 'Pendiente', cliente_id: 5, saldo: '10.00' })).toBe(true);
    expect(needsCreditCheck(before, { estado: 'Pendiente', cliente_id: 6, saldo: '10.00' })).toBe(true);
    expect(needsCreditCheck(before, { estado: 'Pendiente', cliente_id: 5, saldo: '100.01' })).toBe(true);
  });
  it('never refuses lowering what the customer owes, nor a sale that is not Pendiente', () => {
    expect(needsCreditCheck(before, { estado: 'Pendiente', cliente_id: 5, saldo: '99.99' })).toBe(false);
    expect(needsCreditCheck(before, { estado: 'Completada', cliente_id: 5, saldo: '0.00' })).toBe(false);
  });
});

describe('documentoEmisor', () => {
  it('remembers the type that issued the number while the sale is on another, and forgets it back on it', () => {
    expect(documentoEmisor({ documento_id: 3, documento_emisor_id: null }, 3)).toBeNull();
    expect(documentoEmisor({ documento_id: 3, documento_emisor_id: null }, 8)).toBe(3);
    expect(documentoEmisor({ documento_id: 8, documento_emisor_id: 3 }, 9)).toBe(3);
    expect(documentoEmisor({ documento_id: 8, documento_emisor_id: 3 }, 3)).toBeNull();
  });
});
