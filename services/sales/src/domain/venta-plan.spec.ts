import { SaleCreateRequest, type TenantContext } from '@erp/contracts';
import { resolvedProduct } from '../../test/resolved-product';
import { planVenta, type VentaResolutions } from './venta-plan';

const product = resolvedProduct;

const ctx: TenantContext = {
  requestId: 'r',
  empresa: { id: 1, nombre: 'E', iva: '13', venderSinStock: true },
  usuario: { id: 4, nombre: 'Ana' },
};

const found = (over: Partial<VentaResolutions> = {}): VentaResolutions => ({
  sucursal: { ok: true, value: { id: 1, nombre: 'Centro' } },
  bodega: { ok: true, value: { id: 2, nombre: 'Principal', id_sucursal: 1 } },
  productos: [{ ok: true, value: product(7) }],
  documento: { id: 3, sucursal_id: 1, nombre: 'Factura', prefijo: 'F-', correlativo: 5, activo: true, solo_cotizacion: false },
  canal: { id: 1, nombre: 'Tienda', activo: true },
  cliente: undefined,
  ...over,
});

const request = (over: Record<string, unknown> = {}) =>
  SaleCreateRequest.parse({
    fecha: '2026-01-02',
    estado: 'Completada',
    id_sucursal: 1,
    id_bodega: 2,
    id_documento: 3,
    id_canal: 1,
    detalles: [{ id_producto: 7, cantidad: 2 }],
    ...over,
  });

describe('planVenta', () => {
  it('prices a line at the product price with the company rate and takes its stock', () => {
    const sut = planVenta(request(), ctx, found());
    expect(sut.ok).toBe(true);
    if (!sut.ok) return;
    expect(sut.plan.lines[0]).toMatchObject({
      precio: '11.3',
      porcentaje_impuesto: '13',
      total: '22.60',
      sub_total: '20.00',
      iva: '2.60',
      costo: '5.5',
    });
    expect(sut.plan.totals).toEqual({ sub_total: '20.00', iva: '2.60', total: '22.60', descuento: '0.00', exenta: '0.00' });
    expect(sut.plan.stockLines).toHaveLength(1);
  });

  it('prefers the product rate over the company rate', () => {
    const sut = planVenta(request(), ctx, found({ productos: [{ ok: true, value: product(7, { porcentaje_impuesto: '0.0000' }) }] }));
    expect(sut.ok && sut.plan.lines[0]).toMatchObject({ porcentaje_impuesto: '0', exenta: '22.60', iva: '0.00' });
  });

  it('never takes stock for services or quotations', () => {
    const services = planVenta(request(), ctx, found({ productos: [{ ok: true, value: product(7, { tipo: 'Servicio' }) }] }));
    expect(services.ok && services.plan.stockLines).toEqual([]);
    const quote = planVenta(request({ estado: 'Cotizacion' }), ctx, found());
    expect(quote.ok && quote.plan).toMatchObject({ estado: 'Cotizacion', cotizacion: true, stockLines: [] });
  });

  it('stores Pagada as Completada with monto_pago = total', () => {
    const sut = planVenta(request({ estado: 'Pagada' }), ctx, found());
    expect(sut.ok && sut.plan).toMatchObject({ estado: 'Completada', payment: { monto_pago: '22.60', cambio: '0.00', saldo: '0.00' } });
  });

  it('reports every problem at once, by field', () => {
    const sut = planVenta(
      request({
        id_canal: 9,
        id_cliente: 8,
        detalles: [
          { id_producto: 7, cantidad: 1 },
          { codigo_producto: 'X', cantidad: 1 },
          { id_producto: 6, cantidad: 1, precio: 1, descuento: 2 },
        ],
      }),
      { ...ctx, usuario: null },
      found({
        bodega: { ok: true, value: { id: 2, nombre: 'Norte', id_sucursal: 5 } },
        productos: [
          { ok: true, value: product(7, { enable: 0 }) },
          { ok: false, message: 'No existe un producto con código o código de barras "X"' },
          { ok: true, value: product(6) },
        ],
        documento: undefined,
        canal: undefined,
      }),
    );
    expect(sut.ok).toBe(false);
    expect(!sut.ok && sut.details).toEqual({
      id_bodega: ['La bodega 2 no pertenece a la sucursal Centro'],
      id_documento: ['El tipo de documento 3 no existe'],
      id_canal: ['El canal 9 no existe'],
      id_cliente: ['El cliente 8 no existe'],
      usuario: ['La empresa no tiene un usuario activo: asocie la API key a un usuario o active un usuario administrador'],
      'detalles.0.id_producto': ['El producto P-7 está inactivo'],
      'detalles.1.codigo_producto': ['No existe un producto con código o código de barras "X"'],
      'detalles.2.descuento': ['El descuento (2.00) supera el importe de la línea (1.00)'],
    });
  });

  it('names the branch field that was sent', () => {
    const sut = planVenta(
      request({ id_sucursal: undefined, sucursal: 'Nada' }),
      ctx,
      found({ sucursal: { ok: false, message: 'No existe una sucursal activa llamada "Nada"' } }),
    );
    expect(!sut.ok && sut.details.sucursal).toEqual(['No existe una sucursal activa llamada "Nada"']);
  });

  it('refuses a sale whose total exceeds what the columns keep', () => {
    const sut = planVenta(request({ detalles: [{ id_producto: 7, cantidad: 999_999_999, precio: 999_999_999 }] }), ctx, found());
    expect(!sut.ok && Object.keys(sut.details)).toEqual(['detalles.0.cantidad']);
  });
});
