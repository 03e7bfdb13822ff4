import { parseJsonExact } from './json';
import { Decimal } from '@erp/contracts';
import { parseAmount, unitPriceAndDiscount } from './money';
import { decidePedido, planPedidoVenta, shopifyPedidoIntent, spread, wooPedidoIntent, type PedidoIntent } from './pedidos';
import { wooProductoIntent } from './productos';
import { shopifyOrderBody, wooOrder, wooProduct } from '../../test/platform.factories';

describe('unitPriceAndDiscount', () => {
  it('splits a line charge so that quantity × price − discount is exactly the charge', () => {
    expect(unitPriceAndDiscount(parseAmount('10.00')!, parseAmount(3)!)).toEqual({ precio: '3.34', descuento: '0.02' });
    expect(unitPriceAndDiscount(parseAmount('6.45')!, parseAmount(2)!)).toEqual({ precio: '3.23', descuento: '0.01' });
    expect(unitPriceAndDiscount(parseAmount('199.00')!, parseAmount(1)!)).toEqual({ precio: '199.00', descuento: '0.00' });
  });
});

describe('wooPedidoIntent', () => {
  it('reads status, customer, payment method, version and lines (tax added to each line charge)', () => {
    const sut = wooPedidoIntent(
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
      total: parseAmount('16.45'),
      productos: [
        {
          id_linea: '300',
          id_variante: null,
          id_producto_externo: '93',
          sku: 'LAP-14',
          nombre: 'Laptop 14',
          cantidad: parseAmount(2),
          cargo: parseAmount('6.45'),
        },
        {
          id_linea: '301',
          id_variante: '23',
          id_producto_externo: '22',
          sku: null,
          nombre: 'Camiseta - M',
          cantidad: parseAmount(3),
          cargo: parseAmount('10.00'),
        },
      ],
      cargos: [],
      descuento: new Decimal(0),
      reembolsos: [],
    });
  });

  it('reads shipping and fee lines, a negative fee included, each at its total plus its tax', () => {
    const sut = wooPedidoIntent({
      ...wooOrder({
        id: 728,
        status: 'processing',
        line_items: [{ product_id: 93, sku: 'LAP-14', quantity: 1, total: '20.00', total_tax: '2.60' }],
      }),
      shipping_lines: [{ id: 1, method_title: 'Flat rate', total: '10.00', total_tax: '1.30' }],
      fee_lines: [
        { id: 2, name: 'Empaque de regalo', total: '2.00', total_tax: '0.26' },
        { id: 3, name: 'Descuento fidelidad', total: '-5.00', total_tax: '0.00' },
      ],
      total: '31.16',
    });
    expect(sut.cargos).toEqual([
      { tipo: 'envio', nombre: 'Flat rate', cargo: parseAmount('11.30') },
      { tipo: 'cargo', nombre: 'Empaque de regalo', cargo: parseAmount('2.26') },
      { tipo: 'cargo', nombre: 'Descuento fidelidad', cargo: parseAmount('-5.00') },
    ]);
    expect(planPedidoVenta(sut).total).toBe('31.16');
  });

  it('reads refunds: the amount, and the lines the refund resource names (restocked, as the store refunded them)', () => {
    const sut = wooPedidoIntent({
      ...wooOrder({ id: 723, status: 'completed', line_items: [] }),
      refunds: [
        { id: 726, reason: '', total: '-10.00' },
        {
          id: 724,
          amount: '9.00',
          line_items: [{ id: 314, quantity: -1, total: '-9.00', meta_data: [{ id: 2076, key: '_refunded_item_id', value: '311' }] }],
        },
      ],
    });
    expect(sut.reembolsos).toEqual([
      { id: '726', monto: parseAmount('10.00'), lineas: [] },
      { id: '724', monto: parseAmount('9.00'), lineas: [{ id_linea: '311', cantidad: parseAmount(1), reponer: true }] },
    ]);
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
    expect(wooPedidoIntent(wooOrder({ id: 1, status, line_items: [] })).accion).toBe(accion);
  });
});

describe('shopifyPedidoIntent', () => {
  const line = {
    id: '866550311766439020',
    product_id: '632910392',
    variant_id: '808950810',
    sku: 'IPOD2008BLACK',
    title: 'IPod Nano - 8GB',
    quantity: 2,
    price: '199.00',
  };

  it('reads an order with ids beyond 2^53 exactly', () => {
    const sut = shopifyPedidoIntent(
      parseJsonExact(shopifyOrderBody({ id: '820982911946154508', financial_status: 'paid', gateway: 'bogus', line_items: [line] })),
    );
    expect(sut).toMatchObject({
      referencia: 'shop-820982911946154508',
      accion: 'completar',
      cliente: { email: 'jon@example.com', nombre: 'Jon Snow' },
      forma_pago: 'bogus',
      total: parseAmount('398.00'),
      productos: [
        {
          id_linea: '866550311766439020',
          id_variante: '808950810',
          id_producto_externo: '632910392',
          sku: 'IPOD2008BLACK',
          cantidad: parseAmount(2),
          cargo: parseAmount('398.00'),
        },
      ],
    });
  });

  it("adds tax lines to a line only when the shop's prices exclude tax", () => {
    const withTax = (taxes_included: boolean) => {
      const order = JSON.parse(shopifyOrderBody({ id: '1', financial_status: 'paid', line_items: [{ ...line, id: '11', quantity: 1 }] }));
      order.taxes_included = taxes_included;
      order.line_items[0].tax_lines = [{ price: '13.00', rate: 0.13, title: 'IVA' }];
      return shopifyPedidoIntent(order).productos[0]!.cargo;
    };
    expect(withTax(false)).toEqual(parseAmount('212.00'));
    expect(withTax(true)).toEqual(parseAmount('199.00'));
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
    expect(
      shopifyPedidoIntent(parseJsonExact(shopifyOrderBody({ id: '1', financial_status, cancelled_at, line_items: [line] }))).accion,
    ).toBe(accion);
  });
});

describe('decidePedido', () => {
  const intent = (accion: PedidoIntent['accion'], version: string) => ({ accion, estado_plataforma: accion, version: new Date(version) });

  it('creates once, then recognises the sale', () => {
    expect(decidePedido(intent('completar', '2026-03-12T10:00:00Z'), undefined)).toEqual({ kind: 'crear', estado: 'Completada' });
    expect(decidePedido(intent('pendiente', '2026-03-12T10:00:00Z'), { version: null, id_venta: null, cancelado: false })).toEqual({
      kind: 'crear',
      estado: 'Pendiente',
    });
    expect(
      decidePedido(intent('completar', '2026-03-12T10:00:00Z'), {
        version: new Date('2026-03-12T10:00:00Z'),
        id_venta: 9,
        cancelado: false,
      }),
    ).toEqual({ kind: 'completar', id_venta: 9 });
    expect(
      decidePedido(intent('pendiente', '2026-03-12T10:00:00Z'), {
        version: new Date('2026-03-12T10:00:00Z'),
        id_venta: 9,
        cancelado: false,
      }),
    ).toEqual({ kind: 'ya-creada', id_venta: 9 });
  });

  it('never resurrects a cancelled order, and ignores deliveries older than the newest applied', () => {
    expect(
      decidePedido(intent('anular', '2026-03-12T11:00:00Z'), { version: new Date('2026-03-12T10:00:00Z'), id_venta: 9, cancelado: false }),
    ).toEqual({ kind: 'anular' });
    expect(
      decidePedido(intent('completar', '2026-03-12T12:00:00Z'), {
        version: new Date('2026-03-12T11:00:00Z'),
        id_venta: 9,
        cancelado: true,
      }),
    ).toMatchObject({ kind: 'ignorar' });
    expect(
      decidePedido(intent('anular', '2026-03-12T09:00:00Z'), { version: new Date('2026-03-12T10:00:00Z'), id_venta: 9, cancelado: false }),
    ).toMatchObject({ kind: 'ignorar' });
  });

  it('applies a cancellation with the same modification time as the sale it cancels (one-second resolution)', () => {
    expect(
      decidePedido(intent('anular', '2026-03-12T10:00:00Z'), { version: new Date('2026-03-12T10:00:00Z'), id_venta: 9, cancelado: false }),
    ).toEqual({ kind: 'anular' });
    expect(
      decidePedido(intent('completar', '2026-03-12T10:00:00Z'), {
        version: new Date('2026-03-12T10:00:00Z'),
        id_venta: 9,
        cancelado: true,
      }),
    ).toMatchObject({ kind: 'ignorar' });
  });
});

describe('spread', () => {
  it('splits cents in proportion, the shares adding up exactly and none above its weight', () => {
    const cents = (...v: string[]) => v.map((x) => parseAmount(x)!);
    expect(spread(parseAmount('20.00')!, cents('199.00', '199.00', '10.00'))).toEqual(cents('9.76', '9.75', '0.49'));
    expect(spread(parseAmount('0.01')!, cents('1.00', '1.00'))).toEqual(cents('0.01', '0.00'));
    expect(spread(parseAmount('2.00')!, cents('1.50', '0.50'))).toEqual(cents('1.50', '0.50'));
    expect(spread(new Decimal(0), cents('3.00'))).toEqual([new Decimal(0)]);
  });
});

describe('planPedidoVenta', () => {
  const base = (over: Partial<PedidoIntent>): PedidoIntent => ({
    referencia: 'woo-1',
    accion: 'completar',
    estado_plataforma: 'processing',
    version: null,
    fecha: '2026-03-12',
    cliente: { email: null, nombre: null },
    forma_pago: null,
    total: null,
    productos: [],
    cargos: [],
    descuento: new Decimal(0),
    reembolsos: [],
    ...over,
  });
  const product = (cantidad: number, cargo: string) => ({
    id_linea: null,
    id_variante: null,
    id_producto_externo: null,
    sku: null,
    nombre: 'P',
    cantidad: parseAmount(cantidad)!,
    cargo: parseAmount(cargo)!,
  });
  const charged = (plan: ReturnType<typeof planPedidoVenta>) =>
    plan.lineas.map((l) => (Math.round(Number(l.cantidad) * Number(l.precio) * 100) - Math.round(Number(l.descuento) * 100)) / 100);

  it('sells shipping and fees as service lines, so the sale adds up to the order total', () => {
    const sut = planPedidoVenta(
      base({
        total: parseAmount('29.35'),
        productos: [product(2, '6.45'), product(1, '12.90')],
        cargos: [{ tipo: 'envio', nombre: 'Flat Rate', cargo: parseAmount('10.00')! }],
      }),
    );
    expect(sut.total).toBe('29.35');
    expect(sut.lineas.map((l) => l.origen)).toEqual([{ producto: 0 }, { producto: 1 }, { servicio: 'Flat Rate' }]);
    expect(charged(sut)).toEqual([6.45, 12.9, 10]);
    expect(sut.notas).toEqual([]);
  });

  it('spreads a negative fee and the unallocated discount over the lines to the cent', () => {
    const sut = planPedidoVenta(
      base({
        total: parseAmount('80.00'),
        productos: [product(3, '60.00'), product(1, '30.00')],
        cargos: [{ tipo: 'cargo', nombre: 'Descuento fidelidad', cargo: parseAmount('-4.00')! }],
        descuento: parseAmount('6.00')!,
      }),
    );
    expect(sut.total).toBe('80.00');
    expect(charged(sut)).toEqual([53.33, 26.67]);
    expect(sut.notas).toHaveLength(2);
  });

  it('takes the platform total as the authority: a surplus of the parts is a discount, a shortfall a charge line, both noted', () => {
    const over = planPedidoVenta(base({ total: parseAmount('9.99'), productos: [product(1, '10.00')] }));
    expect(over).toMatchObject({ total: '9.99', notas: [expect.stringContaining('0.01 se registra como descuento')] });
    const under = planPedidoVenta(base({ total: parseAmount('10.50'), productos: [product(1, '10.00')] }));
    expect(under.lineas.map((l) => l.origen)).toEqual([{ producto: 0 }, { servicio: 'Ajuste al total del pedido' }]);
    expect(charged(under)).toEqual([10, 0.5]);
    expect(under.notas).toEqual([expect.stringContaining('0.50 se registra como cargo')]);
  });

  it('refuses an order whose discounts exceed its lines, or a line charged a negative amount', () => {
    expect(() => planPedidoVenta(base({ productos: [product(1, '10.00')], descuento: parseAmount('10.01')! }))).toThrow(
      'superan la suma de sus líneas (10.00)',
    );
    expect(() => planPedidoVenta(base({ productos: [product(1, '-1.00')] }))).toThrow('importe negativo (-1.00)');
  });
});

describe('wooProductoIntent', () => {
  it('takes the sale price over the regular one, status publish as enabled, and stock when managed', () => {
    expect(
      wooProductoIntent(
        wooProduct({ id: 794, name: 'Camiseta', sku: 'CAM-01', regular_price: '21.99', sale_price: '19.99', stock_quantity: 12 }),
      ),
    ).toEqual({
      id_externo: '794',
      eliminado: false,
      version: new Date('2026-03-12T16:04:35Z'),
      sku: 'CAM-01',
      nombre: 'Camiseta',
      precio: '19.99',
      activo: true,
      stock: '12',
    });
    expect(
      wooProductoIntent(
        wooProduct({ id: 794, name: 'Camiseta', sku: 'CAM-01', regular_price: '21.99', status: 'draft', manage_stock: false }),
      ),
    ).toMatchObject({
      precio: '21.99',
      activo: false,
      stock: null,
    });
  });

  it('reads a deletion ({id} only)', () => {
    expect(wooProductoIntent({ id: 794 })).toMatchObject({ id_externo: '794', eliminado: true });
  });
});
