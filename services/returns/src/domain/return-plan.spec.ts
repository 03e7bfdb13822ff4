import { planDevolucion, ventaProblem, type PlanInput, type DetalleVenta } from './return-plan';
import { summarize } from './summary';

const line = (over: Partial<DetalleVenta> & Pick<DetalleVenta, 'id' | 'id_producto'>): DetalleVenta => ({
  codigo: `P${over.id_producto}`,
  nombre_producto: `Producto ${over.id_producto}`,
  descripcion: null,
  mueve_stock: true,
  cantidad: '1.0000',
  precio: '10.0000',
  descuento: '0.00',
  porcentaje_impuesto: '13.0000',
  sub_total: '8.85',
  iva: '1.15',
  exenta: '0.00',
  total: '10.00',
  costo: '4.0000',
  ...over,
});

// 3 mice at 19.95 with a 1.90 discount: total 57.95 = 51.28 + 6.67.
const mouse = line({
  id: 11,
  id_producto: 2,
  cantidad: '3.0000',
  precio: '19.9500',
  descuento: '1.90',
  sub_total: '51.28',
  iva: '6.67',
  total: '57.95',
  costo: '9.1000',
});
// 4 books, exempt.
const libro = line({
  id: 12,
  id_producto: 3,
  cantidad: '4.0000',
  precio: '12.0000',
  porcentaje_impuesto: '0.0000',
  sub_total: '48.00',
  iva: '0.00',
  exenta: '48.00',
  total: '48.00',
  costo: '8.0000',
});
// A service line: never moves stock.
const instalacion = line({
  id: 13,
  id_producto: 4,
  mueve_stock: false,
  cantidad: '2.0000',
  precio: '25.0000',
  sub_total: '44.25',
  iva: '5.75',
  total: '50.00',
  costo: '0.0000',
});
// The same product twice in one sale.
const mouse2 = line({
  id: 14,
  id_producto: 2,
  cantidad: '1.0000',
  precio: '19.9500',
  sub_total: '17.65',
  iva: '2.30',
  total: '19.95',
  costo: '9.1000',
});

const input = (over: Partial<PlanInput>): PlanInput => ({
  tipo: 'devolucion',
  detallesVenta: [mouse, libro, instalacion, mouse2],
  returned: new Map(),
  requested: [],
  ...over,
});

const ok = (over: Partial<PlanInput>) => {
  const result = planDevolucion(input(over));
  if (!result.ok) throw new Error(`planned a refusal: ${JSON.stringify(result.details)}`);
  return result.plan;
};

describe('planDevolucion', () => {
  it('takes price, cost, tax and a share of the discount from the sale line', () => {
    const sut = ok({ requested: [{ id_detalle: 11, cantidad: 1 }] });
    expect(sut.lines).toEqual([
      expect.objectContaining({
        cantidad: '1.000',
        precio: '19.9500',
        costo: '9.1000',
        descuento: '0.63',
        porcentaje_impuesto: '13.0000',
        total: '19.32',
        sub_total: '17.09',
        iva: '2.23',
        exenta: '0.00',
        mueve_stock: true,
      }),
    ]);
    expect(sut.totals).toEqual({ sub_total: '17.09', iva: '2.23', total: '19.32', descuento: '0.63', exenta: '0.00' });
    expect(sut.stock).toEqual([{ id_producto: 2, cantidad: '1.000' }]);
  });

  it('adds up to the sale line to the cent when the line is returned piece by piece', () => {
    const first = ok({ requested: [{ id_detalle: 11, cantidad: 1 }] }).lines[0]!;
    const second = ok({ returned: new Map([[11, '1.000']]), requested: [{ id_detalle: 11, cantidad: 1 }] }).lines[0]!;
    const third = ok({ returned: new Map([[11, '2.000']]), requested: [{ id_detalle: 11, cantidad: 1 }] }).lines[0]!;
    const add = (field: 'total' | 'sub_total' | 'iva' | 'descuento') =>
      [first, second, third].reduce((n, l) => n + Math.round(Number(l[field]) * 100), 0);
    expect([add('total'), add('sub_total'), add('iva'), add('descuento')]).toEqual([5795, 5128, 667, 190]);
    for (const l of [first, second, third])
      expect(Math.round(Number(l.sub_total) * 100) + Math.round(Number(l.iva) * 100)).toBe(Math.round(Number(l.total) * 100));
  });

  it('returns a line with a fourth decimal whole, stock and money, with no residue under 0.001', () => {
    // 1.0005 units took 1.001 from stock (rounded half up, as inventory moves it); 0.9996 took 1.000.
    const raro = line({ id: 21, id_producto: 7, cantidad: '1.0005', precio: '10.0000', sub_total: '8.86', iva: '1.15', total: '10.01' });
    const bajo = line({ id: 22, id_producto: 8, cantidad: '0.9996', precio: '10.0000', sub_total: '8.85', iva: '1.15', total: '10.00' });
    const whole = ok({
      detallesVenta: [raro, bajo],
      requested: [
        { id_detalle: 21, cantidad: 1.001 },
        { id_detalle: 22, cantidad: 1 },
      ],
    });
    expect(whole.lines.map((l) => [l.cantidad, l.total, l.sub_total, l.iva])).toEqual([
      ['1.001', '10.01', '8.86', '1.15'],
      ['1.000', '10.00', '8.85', '1.15'],
    ]);
    expect(whole.stock).toEqual([
      { id_producto: 7, cantidad: '1.001' },
      { id_producto: 8, cantidad: '1.000' },
    ]);
    // In two pieces the amounts still add up to the line, and nothing is left to return.
    const first = ok({ detallesVenta: [raro], requested: [{ id_detalle: 21, cantidad: 0.5 }] }).lines[0]!;
    const rest = ok({ detallesVenta: [raro], returned: new Map([[21, '0.500']]), requested: [{ id_detalle: 21, cantidad: 0.501 }] })
      .lines[0]!;
    expect(Math.round(Number(first.total) * 100) + Math.round(Number(rest.total) * 100)).toBe(1001);
    const annulled = planDevolucion(input({ tipo: 'anulacion_factura', detallesVenta: [raro], returned: new Map([[21, '1.001']]) }));
    expect(annulled).toEqual({
      ok: false,
      message: 'La venta ya fue devuelta por completo',
      details: { detalles: ['La venta ya fue devuelta por completo'] },
    });
    // The invoice's annulment without lines takes what is left, whole.
    expect(
      ok({ tipo: 'anulacion_factura', detallesVenta: [raro], returned: new Map([[21, '0.500']]) }).lines.map((l) => [l.cantidad, l.total]),
    ).toEqual([['0.501', rest.total]]);
    // More than the stock took is refused.
    const over = planDevolucion(input({ detallesVenta: [raro], requested: [{ id_detalle: 21, cantidad: 1.002 }] }));
    expect(over.ok || over.details).toEqual({
      'detalles.0.cantidad': ['Excede lo que queda por devolver: vendido 1.001, ya devuelto 0, disponible 1.001'],
    });
  });

  it('refuses more than sold minus what active returns took, naming the line', () => {
    const sut = planDevolucion(
      input({
        returned: new Map([[11, '2.500']]),
        requested: [
          { id_detalle: 12, cantidad: 1 },
          { id_detalle: 11, cantidad: 0.501 },
        ],
      }),
    );
    expect(sut.ok).toBe(false);
    if (sut.ok) return;
    expect(sut.details).toEqual({
      'detalles.1.cantidad': ['Excede lo que queda por devolver: vendido 3, ya devuelto 2.5, disponible 0.5'],
    });
    expect(sut.message).toMatch(/^detalles\.1\.cantidad: Excede/);
  });

  it('counts what earlier lines of the same request take', () => {
    const sut = planDevolucion(
      input({
        requested: [
          { id_detalle: 12, cantidad: 3 },
          { id_detalle: 12, cantidad: 2 },
        ],
      }),
    );
    expect(sut.ok).toBe(false);
    if (!sut.ok) expect(Object.keys(sut.details)).toEqual(['detalles.1.cantidad']);
  });

  it('spreads a product over the sale’s lines of that product in order', () => {
    const sut = ok({ returned: new Map([[11, '2.000']]), requested: [{ id_producto: 2, cantidad: 2 }] });
    expect(sut.lines.map((l) => [l.detalleVenta.id, l.cantidad])).toEqual([
      [11, '1.000'],
      [14, '1.000'],
    ]);
    expect(sut.stock).toEqual([{ id_producto: 2, cantidad: '2.000' }]);
    expect(planDevolucion(input({ returned: new Map([[11, '2.000']]), requested: [{ id_producto: 2, cantidad: 2.001 }] })).ok).toBe(false);
  });

  it('refuses lines and products that are not in the sale', () => {
    const sut = planDevolucion(
      input({
        requested: [
          { id_detalle: 99, cantidad: 1 },
          { id_producto: 77, cantidad: 1 },
        ],
      }),
    );
    expect(sut.ok).toBe(false);
    if (!sut.ok)
      expect(sut.details).toEqual({
        'detalles.0.id_detalle': ['La línea 99 no pertenece a la venta'],
        'detalles.1.id_producto': ['El producto 77 no está en la venta'],
      });
  });

  it('keeps an exempt line exempt and never moves the stock of a service', () => {
    const sut = ok({
      requested: [
        { id_producto: 3, cantidad: 1 },
        { id_producto: 4, cantidad: 1 },
      ],
    });
    expect(sut.lines.map((l) => [l.total, l.iva, l.exenta, l.mueve_stock])).toEqual([
      ['12.00', '0.00', '12.00', true],
      ['25.00', '2.87', '0.00', false],
    ]);
    expect(sut.stock).toEqual([{ id_producto: 3, cantidad: '1.000' }]);
  });

  it('moves no stock for a discount adjustment, and credits the price asked for at the line’s tax rate', () => {
    const sut = ok({ tipo: 'descuento_ajuste', requested: [{ id_detalle: 11, cantidad: 2, precio: 5 }] });
    expect(sut.lines).toEqual([
      expect.objectContaining({
        cantidad: '2.000',
        precio: '5',
        total: '10.00',
        sub_total: '8.85',
        iva: '1.15',
        descuento: '0.00',
        mueve_stock: false,
      }),
    ]);
    expect(sut.stock).toEqual([]);
  });

  it('refuses a credited price above the line’s effective price', () => {
    const sut = planDevolucion(input({ tipo: 'descuento_ajuste', requested: [{ id_detalle: 11, cantidad: 1, precio: 19.95 }] }));
    expect(sut.ok).toBe(false);
    if (!sut.ok) expect(Object.keys(sut.details)).toEqual(['detalles.0.precio']);
  });

  it('annuls the invoice with whatever is left of every line when no lines are sent', () => {
    const sut = ok({
      tipo: 'anulacion_factura',
      returned: new Map([
        [11, '1.000'],
        [12, '4.000'],
      ]),
    });
    expect(sut.lines.map((l) => [l.detalleVenta.id, l.cantidad])).toEqual([
      [11, '2.000'],
      [13, '2.000'],
      [14, '1.000'],
    ]);
    const refused = planDevolucion(
      input({
        tipo: 'anulacion_factura',
        returned: new Map([
          [11, '3'],
          [12, '4'],
          [13, '2'],
          [14, '1'],
        ]),
      }),
    );
    expect(refused).toEqual({
      ok: false,
      message: 'La venta ya fue devuelta por completo',
      details: { detalles: ['La venta ya fue devuelta por completo'] },
    });
  });
});

describe('ventaProblem', () => {
  it('lets completed and pending sales be returned, not quotations or annulled sales', () => {
    expect([ventaProblem('Completada'), ventaProblem('Pendiente')]).toEqual([undefined, undefined]);
    expect(ventaProblem('Cotizacion')).toBe('Una cotización no se puede devolver');
    expect(ventaProblem('Anulada')).toBe('La venta está anulada');
  });
});

describe('summarize', () => {
  it('adds the types, averages to the cent and lists every type', () => {
    const sut = summarize([
      { tipo: 'devolucion', cantidad: 2, total: '30.00', iva: '3.45', descuento: '0.63' },
      { tipo: 'anulacion_factura', cantidad: 1, total: '10.01', iva: '1.15', descuento: '0' },
    ]);
    expect(sut).toEqual({
      cantidad_devoluciones: 3,
      total_devuelto: '40.01',
      total_iva: '4.60',
      total_descuentos: '0.63',
      promedio_devolucion: '13.34',
      devoluciones_por_tipo: [
        { tipo: 'devolucion', cantidad: 2, total: '30.00' },
        { tipo: 'descuento_ajuste', cantidad: 0, total: '0.00' },
        { tipo: 'anulacion_factura', cantidad: 1, total: '10.01' },
      ],
    });
    expect(summarize([])).toMatchObject({ cantidad_devoluciones: 0, total_devuelto: '0.00', promedio_devolucion: '0.00' });
  });
});
