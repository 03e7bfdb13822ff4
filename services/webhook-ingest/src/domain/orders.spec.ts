import { parseJsonExact } from './json';
import { unitPriceAndDiscount, toUnits } from './money';
import { decideOrder, shopifyOrderIntent, wooOrderIntent, type OrderIntent } from './orders';
import { wooProductIntent } from './products';
import { shopifyOrderBody, wooOrder, wooProduct } from '../../../../test/support/webhook-fixture';

describe('unitPriceAndDiscount', () => {
  it('splits a line charge so that quantity × price − discount is exactly the charge', () => {
    expect(unitPriceAndDiscount(toUnits('10.00')!, toUnits(3)!)).toEqual({ precio: '3.34', descuento: '0.02' });
    expect(unitPriceAndDiscount(toUnits('6.45')!, toUnits(2)!)).toEqual({ precio: '3.23', descuento: '0.01' });
    expect(unitPriceAndDiscount(toUnits('199.00')!, toUnits(1)!)).toEqual({ precio: '199.00', descuento: '0.00' });
  });
});

describe('wooOrderIntent', () => {
  it('reads status, customer, payment method, version and lines (tax added to each line)', () => {
    const sut = wooOrderIntent(
      wooOrder({
        id: 727,
        status: 'processing',
        date_modified_gmt: '2026-03-12T16:04:35',
        email: 'Ana.Lopez@Example.com',
        line_items: [
          { product_id: 93, sku: 'LAP-14', name: 'Laptop 14', quantity: 2, total: '6.00', total_tax: '0.45' },
          { product_id: 22, variation_id: 23, sku: '', name: 'Camiseta - M', quantity: 3, total: '10.00' },
        ],
      }),
    );
    expect(sut).toEqual({
      referencia: 'woo-727',
      accion: 'completar',
      estado_plataforma: 'processing',
      version: new Date('2026-03-12T16:04:35Z'),
      fecha: '2026-03-12',
      cliente: { email: 'ana.lopez@example.com', nombre: 'Ana López' },
      forma_pago: 'Transferencia bancaria directa',
      total: '16.45',
      lineas: [
        { ids_externos: ['93'], sku: 'LAP-14', nombre: 'Laptop 14', cantidad: '2', precio: '3.23', descuento: '0.01' },
        { ids_externos: ['23', '22'], sku: null, nombre: 'Camiseta - M', cantidad: '3', precio: '3.34', descuento: '0.02' },
      ],
    });
  });

  it.each([
    ['processing', 'completar'],
    ['completed', 'completar'],
    ['pending', 'pendiente'],
    ['on-hold', 'pendiente'],
    ['cancelled', 'anular'],
    ['refunded', 'anular'],
    ['failed', 'anular'],
    ['checkout-draft', 'ninguna'],
  ])('maps status %s to %s', (status, accion) => {
    expect(wooOrderIntent(wooOrder({ id: 1, status, line_items: [] })).accion).toBe(accion);
  });
});

describe('shopifyOrderIntent', () => {
  const line = { id: '866550311766439020', product_id: '632910392', variant_id: '808950810', sku: 'IPOD2008BLACK', title: 'IPod Nano - 8GB', quantity: 2, price: '199.00' };

  it('reads an order with ids beyond 2^53 exactly', () => {
    const sut = shopifyOrderIntent(parseJsonExact(shopifyOrderBody({ id: '820982911946154508', financial_status: 'paid', gateway: 'bogus', line_items: [line] })));
    expect(sut).toMatchObject({
      referencia: 'shop-820982911946154508',
      accion: 'completar',
      cliente: { email: 'jon@example.com', nombre: 'Jon Snow' },
      forma_pago: 'bogus',
      total: '398.00',
      lineas: [{ ids_externos: ['808950810', '632910392'], sku: 'IPOD2008BLACK', cantidad: '2', precio: '199.00', descuento: '0.00' }],
    });
  });

  it.each([
    ['paid', null, 'completar'],
    ['pending', null, 'pendiente'],
    ['authorized', null, 'pendiente'],
    ['partially_paid', null, 'pendiente'],
    ['refunded', null, 'anular'],
    ['voided', null, 'anular'],
    ['paid', '2026-03-12T11:00:00-06:00', 'anular'],
  ])('maps financial_status %s (cancelled_at %s) to %s', (financial_status, cancelled_at, accion) => {
    expect(shopifyOrderIntent(parseJsonExact(shopifyOrderBody({ id: '1', financial_status, cancelled_at, line_items: [line] }))).accion).toBe(accion);
  });
});

describe('decideOrder', () => {
  const intent = (accion: OrderIntent['accion'], version: string): OrderIntent => ({
    referencia: 'woo-1',
    accion,
    estado_plataforma: accion,
    version: new Date(version),
    fecha: '2026-03-12',
    cliente: { email: null, nombre: null },
    forma_pago: null,
    total: null,
    lineas: [],
  });

  it('creates once, then recognises the sale', () => {
    expect(decideOrder(intent('completar', '2026-03-12T10:00:00Z'), undefined)).toEqual({ kind: 'crear', estado: 'Completada' });
    expect(decideOrder(intent('pendiente', '2026-03-12T10:00:00Z'), { version: null, id_venta: null, cancelado: false })).toEqual({ kind: 'crear', estado: 'Pendiente' });
    expect(decideOrder(intent('completar', '2026-03-12T10:00:00Z'), { version: new Date('2026-03-12T10:00:00Z'), id_venta: 9, cancelado: false })).toEqual({ kind: 'completar', id_venta: 9 });
    expect(decideOrder(intent('pendiente', '2026-03-12T10:00:00Z'), { version: new Date('2026-03-12T10:00:00Z'), id_venta: 9, cancelado: false })).toEqual({ kind: 'ya-creada', id_venta: 9 });
  });

  it('never resurrects a cancelled order, and ignores deliveries older than the newest applied', () => {
    expect(decideOrder(intent('anular', '2026-03-12T11:00:00Z'), { version: new Date('2026-03-12T10:00:00Z'), id_venta: 9, cancelado: false })).toEqual({ kind: 'anular' });
    expect(decideOrder(intent('completar', '2026-03-12T12:00:00Z'), { version: new Date('2026-03-12T11:00:00Z'), id_venta: 9, cancelado: true })).toMatchObject({ kind: 'ignorar' });
    expect(decideOrder(intent('anular', '2026-03-12T09:00:00Z'), { version: new Date('2026-03-12T10:00:00Z'), id_venta: 9, cancelado: false })).toMatchObject({ kind: 'ignorar' });
  });
});

describe('wooProductIntent', () => {
  it('takes the sale price over the regular one, status publish as enabled, and stock when managed', () => {
    expect(wooProductIntent(wooProduct({ id: 794, name: 'Camiseta', sku: 'CAM-01', regular_price: '21.99', sale_price: '19.99', stock_quantity: 12 }))).toEqual({
      id_externo: '794',
      eliminado: false,
      version: new Date('2026-03-12T16:04:35Z'),
      sku: 'CAM-01',
      nombre: 'Camiseta',
      precio: '19.99',
      activo: true,
      stock: '12',
    });
    expect(wooProductIntent(wooProduct({ id: 794, name: 'Camiseta', sku: 'CAM-01', regular_price: '21.99', status: 'draft', manage_stock: false }))).toMatchObject({
      precio: '21.99',
      activo: false,
      stock: null,
    });
  });

  it('reads a deletion ({id} only)', () => {
    expect(wooProductIntent({ id: 794 })).toMatchObject({ id_externo: '794', eliminado: true });
  });
});
