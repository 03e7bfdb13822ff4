import { sql } from 'kysely';
import type { JsonText } from '@erp/bus';
import { Sale, isAppError } from '@erp/contracts';
import { createLogger } from '@erp/runtime';
import { tenant, type Harness } from '@erp/testing';
import type { SalesDb } from '../src/db/tables';
import { adminHandlers } from '../src/handlers/admin.handlers';
import { createVentaHandler } from '../src/handlers/create-venta.handler';
import { createVentasBatchHandler } from '../src/handlers/create-ventas-batch.handler';
import { listVentasHandler } from '../src/handlers/read-ventas.handler';
import { ventaExistsHandler } from '../src/handlers/venta-exists.handler';
import { STUB_BODEGA, serveInventory, stubProducto, stubReserva } from './inventory-stub';
import { ANA, saleRequest, salesHarness, seedSales } from './sales.factories';

const ctx = tenant(1, { usuario: ANA });

describe('sales.create against Postgres and NATS', () => {
  let h: Harness<SalesDb>;
  let sut: ReturnType<typeof createVentaHandler>;
  let documentoId: number;
  let canalId: number;
  const reserved: string[] = [];
  const released: string[] = [];

  const request = (over: Record<string, unknown> = {}) => saleRequest({ documentoId, canalId }, over);

  beforeAll(async () => {
    h = await salesHarness('sales');
    const now = new Date().toISOString();
    // Inventory stand-in: every product at 11.30, and a record of reservations.
    serveInventory(h.bus, {
      'inventory.product.resolve': async ({ items }) => ({
        bodega: STUB_BODEGA,
        items: items.map((item) => stubProducto('id_producto' in item ? item.id_producto : 5, { codigo: 'P', nombre: 'Producto' })),
      }),
      'inventory.stock.reserve': async (req) => {
        reserved.push(req.clave);
        return stubReserva(req.clave, 'reservada', req.id_bodega, now);
      },
      'inventory.stock.release': async ({ clave }) => {
        released.push(clave);
        return stubReserva(clave, 'liberada', 2, now);
      },
    });
    ({ documentoId, canalId } = await seedSales(h.db, h.bus, ctx));
    sut = createVentaHandler({ db: h.db, bus: h.bus });
  });

  afterAll(() => h?.close());

  const numbers = async () =>
    (await h.db.selectFrom('ventas').select('numero').where('documento_id', '=', documentoId).orderBy('numero').execute()).map(
      (r) => r.numero,
    );
  const nextNumber = async () =>
    (await h.db.selectFrom('documentos').select('correlativo').where('id', '=', documentoId).executeTakeFirstOrThrow()).correlativo;

  it('gives 30 concurrent sales of one document type 30 distinct consecutive correlatives', async () => {
    const before = await nextNumber();
    const replies = await Promise.all(Array.from({ length: 30 }, () => sut(request(), ctx)));
    const expected = Array.from({ length: 30 }, (_, i) => before + i);
    expect(new Set(replies.map((r) => r.venta.correlativo))).toEqual(new Set(expected.map((n) => `F-${n}`)));
    expect(await numbers()).toEqual(expected);
    expect(await nextNumber()).toBe(before + 30);
  });

  it('leaves no gap when sales fail inside their transaction in the middle of the burst, and releases their stock', async () => {
    // A failure after the number was taken: the insert of a line with cantidad 13 raises.
    await sql`create function sales.fail_on_13() returns trigger language plpgsql as $$
      begin if new.cantidad = 13 then raise exception 'injected failure'; end if; return new; end $$`.execute(h.db);
    await sql`create trigger fail_on_13 before insert on sales.venta_detalles for each row execute function sales.fail_on_13()`.execute(
      h.db,
    );
    try {
      const before = await nextNumber();
      const countBefore = (await numbers()).length;
      released.length = 0;
      reserved.length = 0;
      const outcomes = await Promise.allSettled(
        Array.from({ length: 30 }, (_, i) => sut(request({ detalles: [{ id_producto: 5, cantidad: i % 3 === 1 ? 13 : 1 }] }), ctx)),
      );
      const failed = outcomes.filter((o) => o.status === 'rejected');
      expect(failed).toHaveLength(10);
      const all = await numbers();
      expect(all.slice(countBefore)).toEqual(Array.from({ length: 20 }, (_, i) => before + i));
      expect(await nextNumber()).toBe(before + 20);
      // Every failed sale gave its reservation back; no successful one did.
      expect(released).toHaveLength(10);
      expect(reserved).toHaveLength(30);
    } finally {
      await sql`drop trigger fail_on_13 on sales.venta_detalles`.execute(h.db);
    }
  });

  it('refuses a sale whose document type is deactivated while it waits to be numbered, consuming no number', async () => {
    const before = await nextNumber();
    released.length = 0;
    let sale: Promise<unknown> = Promise.resolve();
    await h.db.transaction().execute(async (trx) => {
      await trx.updateTable('documentos').set({ activo: false }).where('id', '=', documentoId).execute();
      sale = sut(request(), ctx).catch((err: unknown) => err);
      // The sale read the document type as active and now waits for its row to take the number.
      for (let i = 0; ; i++) {
        const { rows } = await sql<{
          n: number;
        }>`select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'`.execute(h.db);
        if (rows[0]!.n > 0) break;
        if (i > 300) throw new Error('the sale never waited for the document type');
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
    });
    try {
      const err = await sale;
      expect(isAppError(err) && { code: err.code, message: err.message, details: err.details }).toEqual({
        code: 'BUSINESS_RULE',
        message: 'El tipo de documento "Factura" está inactivo',
        details: { id_documento: ['El tipo de documento "Factura" está inactivo'] },
      });
      expect(await nextNumber()).toBe(before);
      expect(released).toHaveLength(1);
    } finally {
      await h.db.updateTable('documentos').set({ activo: true }).where('id', '=', documentoId).execute();
    }
  });

  it('creates one sale and reserves once for 10 concurrent requests with one new reference', async () => {
    reserved.length = 0;
    released.length = 0;
    const replies = await Promise.all(Array.from({ length: 10 }, () => sut(request({ referencia_externa: 'ORD-1' }), ctx)));
    expect(replies.filter((r) => !r.idempotent)).toHaveLength(1);
    expect(new Set(replies.map((r) => r.venta.id)).size).toBe(1);
    expect(reserved).toHaveLength(1);
    expect(released).toHaveLength(0);
    const count = await h.db
      .selectFrom('ventas')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('referencia_externa', '=', 'ORD-1')
      .executeTakeFirstOrThrow();
    expect(Number(count.n)).toBe(1);
  });

  it('answers a retry by the alias referencia with the same sale', async () => {
    const again = await sut(request({ referencia: 'ORD-1' }), ctx);
    expect(again.idempotent).toBe(true);
  });

  it('refuses a partner’s retry of a reference with other lines, even when racing the first, and reserves nothing for it', async () => {
    reserved.length = 0;
    const [first, other] = await Promise.allSettled([
      sut(request({ referencia_externa: 'ORD-2' }), ctx),
      sut(request({ referencia_externa: 'ORD-2', detalles: [{ id_producto: 5, cantidad: 3 }] }), ctx),
    ]);
    const outcomes = [first, other].map((o) => (o.status === 'fulfilled' ? 'sale' : isAppError(o.reason) ? o.reason.code : o.reason));
    expect(outcomes.sort()).toEqual(['CONFLICT', 'sale']);
    expect(reserved).toHaveLength(1);
    const venta = await h.db
      .selectFrom('ventas')
      .select(['id', 'correlativo'])
      .where('referencia_externa', '=', 'ORD-2')
      .executeTakeFirstOrThrow();
    const refused = [first, other].find((o) => o.status === 'rejected') as PromiseRejectedResult;
    expect(refused.reason.details).toMatchObject({ id_venta: [String(venta.id)], correlativo: [venta.correlativo] });
  });

  it('answers a platform order’s retry with its sale whatever its body now carries', async () => {
    const platform = (over: Record<string, unknown>) => request({ referencia_externa: 'woo-77', origen: 'woocommerce', ...over });
    const made = await sut(platform({}), ctx);
    const again = await sut(
      platform({ observaciones: 'Pedido woo-77 (woocommerce). Servicios: Envío', detalles: [{ id_producto: 6, cantidad: 2 }] }),
      ctx,
    );
    expect([again.idempotent, again.venta.id]).toEqual([true, made.venta.id]);
  });

  it('starts no sale of a batch once its time budget has passed, answering the first always', async () => {
    const batch = createVentasBatchHandler({ db: h.db, bus: h.bus }, createLogger('sales-int', 'silent'));
    const ventas = [0, 1, 2].map((indice) => ({ indice, venta: request({ referencia_externa: `LOTE-${indice}` }) }));
    const late = await batch({ ventas, plazo_ms: 0 }, ctx);
    expect(late.resultados.map((r) => [r.indice, r.idempotent])).toEqual([[0, false]]);
    const rest = await batch({ ventas, plazo_ms: 5_000 }, ctx);
    expect(rest.resultados.map((r) => [r.indice, r.idempotent])).toEqual([
      [0, true],
      [1, false],
      [2, false],
    ]);
  });

  it('tells the sweeper whether a committed sale holds a reservation key', async () => {
    const row = await h.db
      .selectFrom('ventas')
      .select(['clave_reserva', 'empresa_id'])
      .where('referencia_externa', '=', 'ORD-1')
      .executeTakeFirstOrThrow();
    const exists = ventaExistsHandler(h.db);
    expect(await exists({ empresa_id: 1, clave: row.clave_reserva! })).toEqual({ exists: true });
    expect(await exists({ empresa_id: 2, clave: row.clave_reserva! })).toEqual({ exists: false });
    expect(await exists({ empresa_id: 1, clave: 'nunca' })).toEqual({ exists: false });
  });

  it('refuses a customer over its credit limit before reserving anything', async () => {
    const admin = adminHandlers(h.db, h.bus);
    const { clientes } = await admin['sales.admin.seed'](
      { empresa_id: 1, documentos: [], canales: [], clientes: [{ ref: 'c', nombre: 'Juan', limite_credito: '30', activo: true }] },
      ctx,
    );
    reserved.length = 0;
    await sut(request({ estado: 'Pendiente', id_cliente: clientes.c, detalles: [{ id_producto: 5, cantidad: 2 }] }), ctx); // owes 22.60
    const refused = await sut(
      request({ estado: 'Pendiente', id_cliente: clientes.c, detalles: [{ id_producto: 5, cantidad: 1 }] }),
      ctx,
    ).catch((e: unknown) => e);
    expect(isAppError(refused) && refused.code).toBe('BUSINESS_RULE');
    expect(isAppError(refused) && refused.details).toEqual({
      id_cliente: [
        'La venta excede el límite de crédito del cliente "Juan": límite 30.00, saldo pendiente 22.60, esta venta 11.30, disponible 7.40',
      ],
    });
    expect(reserved).toHaveLength(1);
  });

  it('lists a page of sales with their lines in two statements, whatever the page size', async () => {
    const statements: string[] = [];
    const list = listVentasHandler(h.openDb({ onQuery: (text) => statements.push(text) }));
    const page = await list({ page: 1, per_page: 50, order_by: 'fecha', order_direction: 'desc' }, ctx);
    const items = Sale.array().parse(JSON.parse((page.items as JsonText).text));
    expect(items).toHaveLength(50);
    expect(items.every((v) => v.detalles.length === 1)).toBe(true);
    expect(statements).toHaveLength(2);
  });
});
