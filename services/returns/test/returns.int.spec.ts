import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import {
  AppError,
  Return,
  ReturnsListRequest,
  inventorySubjects,
  isAppError,
  returnsAdminSubjects,
  returnsApiSubjects,
  salesForReturnsSubjects,
  type ReturnableSale,
} from '@erp/contracts';
import { publishEvent, type JsonText } from '@erp/bus';
import { loadConfig } from '@erp/runtime';
import { harness, tenant, until, type Harness } from '@erp/testing';
import { RETURNS_SCHEMA, ReturnsConfig, returnsService } from '../src';
import { findDevolucionJson } from '../src/db/devolucion-json.repository';
import { listDevoluciones } from '../src/db/devolucion-list.repository';
import { findDevolucion } from '../src/db/devolucion-read.repository';
import { listReturnsHandler } from '../src/handlers/read-returns.handler';
import type { ReturnsDb } from '../src/db/tables';

/**
 * The returns service against Postgres and NATS, with sales and inventory stood in for: a sale
 * of 3 mice (discounted), 4 books and a service in warehouse 7, and an inventory that applies each
 * adjustment key once, as the real one does, and can be made unreachable.
 */
const ventaDe = (id: number, estado: ReturnableSale['estado'] = 'Completada'): ReturnableSale => ({
  id,
  estado,
  fecha: '2026-03-01',
  correlativo: `FAC-${id}`,
  id_bodega: 7,
  nombre_cliente: 'Juan Pérez',
  detalles: [
    {
      id: id * 10 + 1,
      id_producto: 2,
      codigo: 'MOU-01',
      nombre_producto: 'Mouse',
      descripcion: null,
      mueve_stock: true,
      cantidad: '3.0000',
      precio: '19.9500',
      descuento: '1.90',
      porcentaje_impuesto: '13.0000',
      sub_total: '51.28',
      iva: '6.67',
      exenta: '0.00',
      total: '57.95',
      costo: '9.1000',
    },
    {
      id: id * 10 + 2,
      id_producto: 3,
      codigo: 'LIB-01',
      nombre_producto: 'Libro',
      descripcion: 'Texto',
      mueve_stock: true,
      cantidad: '4.0000',
      precio: '12.0000',
      descuento: '0.00',
      porcentaje_impuesto: '0.0000',
      sub_total: '48.00',
      iva: '0.00',
      exenta: '48.00',
      total: '48.00',
      costo: '8.0000',
    },
    {
      id: id * 10 + 3,
      id_producto: 4,
      codigo: 'SRV',
      nombre_producto: 'Instalación',
      descripcion: null,
      mueve_stock: false,
      cantidad: '1.0000',
      precio: '25.0000',
      descuento: '0.00',
      porcentaje_impuesto: '13.0000',
      sub_total: '22.12',
      iva: '2.88',
      exenta: '0.00',
      total: '25.00',
      costo: '0.0000',
    },
  ],
});

const EMPRESA = 1;
const OTRA = 2;

describe('returns service against Postgres and NATS', () => {
  let h: Harness<ReturnsDb>;
  /** Stock per `producto:bodega` as the stand-in inventory holds it, and the keys it applied. */
  const stock = new Map<string, number>();
  const applied = new Map<string, Array<{ id_producto: number; id_bodega: number; cantidad: string }>>();
  let adjustCalls = 0;
  let inventoryDown = false;
  const ventas = new Map<string, ReturnableSale>();
  /** Keys the returns registered with their sale under, in order. */
  const registrations: string[] = [];

  const ctx = { requestId: 'returns-int' };
  const create = (over: Record<string, unknown> = {}) =>
    h.bus.request(
      returnsAdminSubjects,
      'returns.admin.create',
      {
        empresa_id: EMPRESA,
        id_venta: 1,
        fecha: '2026-03-05',
        tipo: 'devolucion',
        detalles: [{ id_producto: 2, cantidad: 1 }],
        ...over,
      } as never,
      ctx,
    );
  const refused = async (promise: Promise<unknown>) => {
    const err = await promise.then(
      () => undefined,
      (e: unknown) => e,
    );
    if (!isAppError(err)) throw new Error(`expected a refusal, got ${String(err)}`);
    return err;
  };
  const stockOf = (producto: number, bodega = 7) => stock.get(`${producto}:${bodega}`) ?? 0;
  const snapshot = async () => {
    const [row] = (
      await sql<Record<string, unknown>>`select
        (select count(*)::int from returns.devoluciones) as devoluciones,
        (select count(*)::int from returns.devolucion_detalles) as detalles,
        (select count(*)::int from returns.outbox) as eventos,
        (select coalesce(string_agg(nombre || prefijo || correlativo, ',' order by id), '') from returns.documentos) as series`.execute(
        h.db,
      )
    ).rows;
    return { ...row, adjustCalls, stock: [...stock.entries()].sort() };
  };
  /** Every event written so far is published, and the service's consumer has had time to settle it. */
  const eventsSettled = async () => {
    await until(
      async () =>
        (await sql<{ n: number }>`select count(*)::int as n from returns.outbox where published_at is null`.execute(h.db)).rows[0]!.n === 0,
    );
    await h.untilConsumed('returns-stock-created', 'returns-stock-annulled');
  };

  beforeAll(async () => {
    h = await harness<ReturnsDb>('returns', { schema: RETURNS_SCHEMA, requestTimeoutMs: 5_000 });
    ventas.set(`${EMPRESA}:1`, ventaDe(1));
    ventas.set(`${EMPRESA}:2`, ventaDe(2));
    ventas.set(`${EMPRESA}:3`, ventaDe(3, 'Cotizacion'));
    ventas.set(`${OTRA}:9`, ventaDe(9));
    h.bus.serve(
      salesForReturnsSubjects,
      {
        'sales.sale.returnable': async ({ id_venta }, c) => {
          const venta = ventas.get(`${c.empresa.id}:${id_venta}`);
          if (!venta) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
          return venta;
        },
        'sales.sale.return.register': async ({ id_venta, clave }, c) => {
          const venta = ventas.get(`${c.empresa.id}:${id_venta}`);
          if (!venta) throw AppError.notFound('venta_no_encontrada', 'Venta no encontrada');
          registrations.push(clave);
          return venta;
        },
        'sales.sale.return.square': async () => ({ devoluciones_activas: 0 }),
      },
      { queue: 'sales' },
    );
    h.bus.serve(
      {
        'inventory.product.resolve': inventorySubjects['inventory.product.resolve'],
        'inventory.stock.adjust': inventorySubjects['inventory.stock.adjust'],
      },
      {
        'inventory.product.resolve': async ({ items }) => ({
          bodega: null,
          items: items.map((item) => {
            const id = 'id_producto' in item ? item.id_producto : 0;
            return {
              ok: true as const,
              producto: {
                id,
                codigo: `P${id}`,
                barcode: null,
                nombre: `P${id}`,
                descripcion: null,
                marca: id === 2 ? 'Logitech' : null,
                tipo: 'Producto' as const,
                enable: 1 as const,
                precio: '1',
                costo: '1',
                costo_promedio: '1',
                porcentaje_impuesto: null,
                stock: null,
              },
            };
          }),
        }),
        'inventory.stock.adjust': async (req) => {
          adjustCalls++;
          if (inventoryDown) throw new AppError('UNAVAILABLE', 'inventario no disponible');
          if (applied.has(req.clave)) return { clave: req.clave, aplicado: false, movimientos: [] };
          const lineas = req.lineas.map((l) => ({ id_producto: l.id_producto, id_bodega: l.id_bodega, cantidad: l.cantidad! }));
          applied.set(req.clave, lineas);
          for (const l of lineas)
            stock.set(
              `${l.id_producto}:${l.id_bodega}`,
              Math.round((stockOf(l.id_producto, l.id_bodega) + Number(l.cantidad)) * 1000) / 1000,
            );
          return { clave: req.clave, aplicado: true, movimientos: [] };
        },
      },
      { queue: 'inventory' },
    );
    await h.start((env) => returnsService(loadConfig(ReturnsConfig, env)), { env: { DB_POOL_MAX: '10', REQUEST_TIMEOUT_MS: '3000' } });
  });

  afterAll(() => h?.close());

  it('creates a return from the sale’s lines, numbered from the default series, and puts the stock back once', async () => {
    const { devolucion, idempotent } = await create({
      detalles: [
        { id_producto: 2, cantidad: 1 },
        { id_producto: 4, cantidad: 1 },
      ],
      observaciones: 'Falla',
      usuario: { id: 5, nombre: 'Ana' },
    });
    expect(idempotent).toBe(false);
    expect(devolucion).toMatchObject({
      correlativo: 'NC-1',
      nombre_documento: 'Nota de crédito',
      tipo: 'devolucion',
      enable: 1,
      estado: 'Confirmada',
      id_venta: 1,
      nombre_cliente: 'Juan Pérez',
      nombre_usuario: 'Ana',
      observaciones: 'Falla',
      total: 44.32,
      sub_total: 39.21,
      iva: 5.11,
      descuento: 0.63,
      exenta: 0,
    });
    expect(devolucion.detalles).toEqual([
      expect.objectContaining({
        codigo_producto: 'MOU-01',
        marca_producto: 'Logitech',
        medida: 'Unidad',
        cantidad: 1,
        precio: 19.95,
        costo: 9.1,
        descuento: 0.63,
        total: 19.32,
      }),
      expect.objectContaining({ codigo_producto: 'SRV', marca_producto: '', cantidad: 1, total: 25 }),
    ]);
    // The service line moves nothing; the mouse goes back to the sale's warehouse.
    expect([...applied.values()]).toEqual([[{ id_producto: 2, id_bodega: 7, cantidad: '1.000' }]]);
    expect([...applied.keys()][0]).toMatch(/^devolucion-[0-9a-f-]{36}$/);
    // It registered with its sale, before committing, under the key it keeps.
    const [stored] = await h.db.selectFrom('devoluciones').select('clave_registro').where('id', '=', devolucion.id).execute();
    expect(registrations).toEqual([stored!.clave_registro]);
    expect(stockOf(2)).toBe(1);
    await eventsSettled();
    expect(applied.size).toBe(1);
    expect(stockOf(2)).toBe(1);
  });

  it('refuses an over-return with 422 details and changes nothing: no row, no number, no event, no stock', async () => {
    const before = await snapshot();
    const err = await refused(
      create({
        detalles: [
          { id_producto: 3, cantidad: 1 },
          { id_producto: 2, cantidad: 2.001 },
        ],
      }),
    );
    expect(err.code).toBe('BUSINESS_RULE');
    expect(err.details).toEqual({ 'detalles.1.cantidad': ['Excede lo que queda por devolver: vendido 3, ya devuelto 1, disponible 2'] });
    expect(await snapshot()).toEqual(before);
  });

  it('refuses quotations, unknown and foreign sales', async () => {
    const before = await snapshot();
    expect((await refused(create({ id_venta: 3 }))).code).toBe('BUSINESS_RULE');
    const foreign = await refused(create({ id_venta: 9 }));
    expect([foreign.code, foreign.message]).toEqual(['NOT_FOUND', 'Venta no encontrada']);
    expect((await refused(create({ empresa_id: OTRA, id_venta: 1 }))).code).toBe('NOT_FOUND');
    expect(await snapshot()).toEqual(before);
  });

  it('lets concurrent returns of one sale take together no more than was sold', async () => {
    const outcomes = await Promise.allSettled(
      Array.from({ length: 8 }, () => create({ id_venta: 2, detalles: [{ id_producto: 3, cantidad: 1 }] })),
    );
    const ok = outcomes.filter((o) => o.status === 'fulfilled');
    expect(ok).toHaveLength(4);
    for (const o of outcomes) if (o.status === 'rejected') expect((o.reason as AppError).code).toBe('BUSINESS_RULE');
    expect(stockOf(3)).toBe(4);
    // Numbers of the series stay consecutive: refusals take none.
    const numeros = (await h.db.selectFrom('devoluciones').select('numero').orderBy('numero').execute()).map((r) => r.numero);
    expect(numeros).toEqual([1, 2, 3, 4, 5]);
  });

  it('answers a repeated reference with the same return, created and stocked once, also concurrently', async () => {
    const before = stockOf(2);
    const replies = await Promise.all(Array.from({ length: 5 }, () => create({ referencia: 'CLI-1' })));
    expect(replies.filter((r) => !r.idempotent)).toHaveLength(1);
    expect(new Set(replies.map((r) => r.devolucion.id)).size).toBe(1);
    expect(stockOf(2)).toBe(before + 1);
  });

  it('keeps a return made while inventory is unreachable, and its event puts the stock back once later', async () => {
    const before = stockOf(3);
    inventoryDown = true;
    let row;
    try {
      const { devolucion } = await create({ detalles: [{ id_detalle: 12, cantidad: 0.5 }] });
      row = await h.db
        .selectFrom('devoluciones')
        .select(['id', 'stock_aplicado_at', 'clave_stock'])
        .where('id', '=', devolucion.id)
        .executeTakeFirstOrThrow();
      expect(row.stock_aplicado_at).toBeNull();
      expect(stockOf(3)).toBe(before);
    } finally {
      inventoryDown = false;
    }
    const id = row.id;
    await until(() => stockOf(3) === before + 0.5);
    await until(
      async () =>
        (await h.db.selectFrom('devoluciones').select('stock_aplicado_at').where('id', '=', id).executeTakeFirstOrThrow())
          .stock_aplicado_at !== null,
    );
    expect(applied.get(row.clave_stock!)).toEqual([{ id_producto: 3, id_bodega: 7, cantidad: '0.500' }]);
  });

  it('annuls once: the stock movement reversed under its own key, a repeated annulment and redelivered events move nothing', async () => {
    const { devolucion } = await create({ detalles: [{ id_detalle: 11, cantidad: 1 }] });
    const mice = stockOf(2);
    const annulled = await h.bus.request(
      returnsAdminSubjects,
      'returns.admin.annul',
      { empresa_id: EMPRESA, id_devolucion: devolucion.id },
      ctx,
    );
    expect(annulled).toMatchObject({ enable: 0, estado: 'Anulada' });
    expect(stockOf(2)).toBe(mice - 1);
    expect(applied.get(`devolucion-${devolucion.id}-anulacion`)).toEqual([{ id_producto: 2, id_bodega: 7, cantidad: '-1.000' }]);
    await h.bus.request(returnsAdminSubjects, 'returns.admin.annul', { empresa_id: EMPRESA, id_devolucion: devolucion.id }, ctx);
    await eventsSettled();
    const calls = adjustCalls;
    // The same events again, as a duplicate outbox row or a redelivery past the dedup window would bring them.
    const payload = { empresa_id: EMPRESA, id_devolucion: devolucion.id, id_venta: 1, total: String(devolucion.total) };
    await publishEvent(h.bus, 'events.returns.return.created', payload, { msgId: randomUUID() });
    await publishEvent(h.bus, 'events.returns.return.annulled', payload, { msgId: randomUUID() });
    await eventsSettled();
    expect(stockOf(2)).toBe(mice - 1);
    expect(adjustCalls).toBe(calls);
    // Its quantity is returnable again.
    const again = await create({ detalles: [{ id_detalle: 11, cantidad: 1 }] });
    expect(again.devolucion.estado).toBe('Confirmada');
  });

  it('annuls only the company’s own returns', async () => {
    const { devolucion } = await create({ empresa_id: OTRA, id_venta: 9, detalles: [{ id_producto: 2, cantidad: 1 }] });
    const err = await refused(
      h.bus.request(returnsAdminSubjects, 'returns.admin.annul', { empresa_id: EMPRESA, id_devolucion: devolucion.id }, ctx),
    );
    expect([err.code, err.message]).toEqual(['NOT_FOUND', 'Devolución no encontrada']);
    const notFound = await refused(h.bus.request(returnsApiSubjects, 'returns.return.get', { id: devolucion.id }, tenant(EMPRESA)));
    expect(notFound.code).toBe('NOT_FOUND');
    const mine = await h.bus.request(returnsApiSubjects, 'returns.return.list', { id_venta: 9 }, tenant(EMPRESA));
    expect(mine.items).toEqual([]);
  });

  it('answers each return, alone and in pages, as the very JSON the write paths answer it', async () => {
    const ids = (
      await h.db
        .selectFrom('devoluciones')
        .select('id')
        .where('empresa_id', '=', EMPRESA)
        .orderBy('fecha', 'desc')
        .orderBy('id', 'desc')
        .execute()
    ).map((r) => r.id);
    expect(ids.length).toBeGreaterThan(5);
    const written: string[] = [];
    for (const id of ids) {
      const json = JSON.stringify(Return.parse(await findDevolucion(h.db, EMPRESA, id)));
      expect(await findDevolucionJson(h.db, EMPRESA, id)).toBe(json);
      written.push(json);
    }
    expect(written.some((json) => json.includes('"estado":"Anulada"'))).toBe(true);
    const { json } = await listDevoluciones(h.db, EMPRESA, ReturnsListRequest.parse({ per_page: 200 }));
    expect(json).toBe(`[${written.join(',')}]`);
  });

  it('lists a page of returns with their lines in two statements, newest first', async () => {
    const statements: string[] = [];
    const sut = listReturnsHandler(h.openDb({ onQuery: (text) => statements.push(text) }));
    const page = await sut({ page: 1, per_page: 50 }, tenant(EMPRESA));
    const items = Return.array().parse(JSON.parse((page.items as JsonText).text));
    expect(items.length).toBeGreaterThan(5);
    expect(items.every((d) => d.detalles.length > 0)).toBe(true);
    expect(items.map((d) => d.id)).toEqual([...items.map((d) => d.id)].sort((a, b) => b - a));
    expect(page.pagination).toMatchObject({ total: items.length });
    expect(statements).toHaveLength(2);
  });
});
