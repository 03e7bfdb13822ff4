import { randomUUID } from 'node:crypto';
import { jetstreamManager } from '@nats-io/jetstream';
import { Kysely, PostgresDialect } from 'kysely';
import { Bus, ensureEventStream, provisionJetStream, publishEvent } from '@erp/bus';
import { SaleCreateRequest, inventorySubjects, returnsForSalesSubjects, type TenantContext } from '@erp/contracts';
import { createPool, migrateSchema } from '@erp/db';
import { createLogger } from '@erp/runtime';
import { eventually, isolate, type Isolation } from '@erp/testing';
import { RETURNS_CONSUMERS, startReturnsConsumers } from '../src/consumers/returns.consumer';
import { migrations } from '../src/db/migrations';
import type { SalesDb } from '../src/db/tables';
import { adminHandlers } from '../src/handlers/admin.handlers';
import { createSaleHandler } from '../src/handlers/create-sale.handler';
import { returnRegistrationHandlers } from '../src/handlers/return-registration.handlers';
import { SALES_SCHEMA } from '../src/db/tables';
import { STUB_BODEGA, stubProducto, stubReserva } from './inventory-stub';

const ctx: TenantContext = {
  requestId: 'int',
  empresa: { id: 1, nombre: 'Empresa 1', iva: '13', venderSinStock: true },
  usuario: { id: 9, nombre: 'Ana' },
};
const RETURN_TOTAL = '19.95';

/**
 * A return registers with its sale before it commits, and its created event later books its amount.
 * When the sale's registrations are squared (by an annulment, an update or the sweeper) before that
 * event arrives — it comes back only after its ack wait when sales died delivering it — the sale
 * must not count the return without its amount, and the event must not book it a second time.
 */
describe('return registrations squared before or while their created event is consumed', () => {
  let iso: Isolation;
  let rootDb: Kysely<unknown>;
  let db: Kysely<SalesDb>;
  let bus: Bus;
  let createSale: ReturnType<typeof createSaleHandler>;
  let sut: ReturnType<typeof returnRegistrationHandlers>;
  let documentoId: number;
  let canalId: number;
  /** Returns committed by the returns stand-in: registration key → return id. */
  const committed = new Map<string, number>();
  let nextReturnId = 1;

  beforeAll(async () => {
    iso = await isolate('sales');
    rootDb = new Kysely<unknown>({ dialect: new PostgresDialect({ pool: createPool({ connectionString: iso.databaseUrl, max: 10 }) }) });
    await migrateSchema(rootDb, SALES_SCHEMA, migrations);
    db = rootDb.withSchema(SALES_SCHEMA) as unknown as Kysely<SalesDb>;
    bus = await Bus.connect({
      servers: iso.natsUrl,
      prefix: iso.subjectPrefix,
      name: 'sales-int',
      logger: createLogger('sales-int', 'silent'),
    });
    const now = new Date().toISOString();
    bus.serve(
      {
        'inventory.sucursal.resolve': inventorySubjects['inventory.sucursal.resolve'],
        'inventory.product.resolve': inventorySubjects['inventory.product.resolve'],
        'inventory.stock.reserve': inventorySubjects['inventory.stock.reserve'],
      },
      {
        'inventory.sucursal.resolve': async ({ items }) => items.map(() => ({ ok: true as const, id_sucursal: 1, nombre: 'Centro' })),
        'inventory.product.resolve': async ({ items }) => ({ bodega: STUB_BODEGA, items: items.map(() => stubProducto(5)) }),
        'inventory.stock.reserve': async (req) => stubReserva(req.clave, 'reservada', req.id_bodega, now),
      },
      { queue: 'inventory' },
    );
    bus.serve(
      returnsForSalesSubjects,
      {
        'returns.sale.registrations': async ({ claves }) => ({
          ocupada: false,
          devoluciones: claves
            .filter((clave) => committed.has(clave))
            .map((clave) => ({ clave, id_devolucion: committed.get(clave)!, total: RETURN_TOTAL })),
        }),
      },
      { queue: 'returns' },
    );
    const seeded = await adminHandlers(db, bus)['sales.admin.seed'](
      {
        empresa_id: 1,
        documentos: [{ ref: 'f', nombre: 'Factura', id_sucursal: 1, prefijo: 'F-', correlativo: 1, activo: true, solo_cotizacion: false }],
        canales: [{ ref: 't', nombre: 'Tienda', activo: true }],
        clientes: [],
      },
      ctx,
    );
    documentoId = seeded.documentos.f!;
    canalId = seeded.canales.t!;
    createSale = createSaleHandler({ db, bus });
    sut = returnRegistrationHandlers(db, bus);
    // The stream and the durables as the migration step makes them.
    await provisionJetStream(bus, ['sales']);
    await startReturnsConsumers(db, bus);
  });

  afterAll(async () => {
    await bus.drain();
    await rootDb.destroy();
    await iso.drop();
  });

  /** A sale with one registered return that has committed (as the returns service would answer). */
  const saleWithCommittedReturn = async () => {
    const { venta } = await createSale(
      SaleCreateRequest.parse({
        fecha: '2026-02-01',
        estado: 'Completada',
        id_sucursal: 1,
        id_bodega: 2,
        id_documento: documentoId,
        id_canal: canalId,
        detalles: [{ id_producto: 5, cantidad: 2 }],
      }),
      ctx,
    );
    const clave = randomUUID();
    await sut['sales.sale.return.register']({ id_venta: venta.id, clave }, ctx);
    const idDevolucion = nextReturnId++;
    committed.set(clave, idDevolucion);
    return { ventaId: venta.id, clave, idDevolucion };
  };
  const publishCreated = (ventaId: number, clave: string, idDevolucion: number) =>
    publishEvent(
      bus,
      'events.returns.return.created',
      { empresa_id: 1, id_devolucion: idDevolucion, id_venta: ventaId, total: RETURN_TOTAL, clave_registro: clave },
      { msgId: randomUUID() },
    );
  const booksOf = async (ventaId: number) =>
    db.selectFrom('ventas').select(['devoluciones_activas', 'monto_devuelto']).where('id', '=', ventaId).executeTakeFirstOrThrow();
  /** Waits until the created events' consumer has acknowledged everything published to it. */
  const consumerAtRest = async () => {
    const jsm = await jetstreamManager(bus.nc);
    const stream = await ensureEventStream(bus);
    await eventually(async () => {
      const info = await jsm.consumers.info(stream, RETURNS_CONSUMERS['events.returns.return.created']);
      if (info.num_pending + info.num_ack_pending > 0) throw new Error(`consumer busy: ${JSON.stringify(info.num_pending)}`);
    });
  };

  it('books the amount when the registration is confirmed, and the late event adds nothing', async () => {
    const { ventaId, clave, idDevolucion } = await saleWithCommittedReturn();
    expect(await booksOf(ventaId)).toEqual({ devoluciones_activas: 1, monto_devuelto: '0.00' });

    expect(await sut['sales.sale.return.square']({ id_venta: ventaId }, ctx)).toEqual({ devoluciones_activas: 1 });
    expect(await booksOf(ventaId)).toEqual({ devoluciones_activas: 1, monto_devuelto: RETURN_TOTAL });

    await publishCreated(ventaId, clave, idDevolucion);
    await publishCreated(ventaId, clave, idDevolucion); // republished by another relay pass
    await consumerAtRest();
    expect(await booksOf(ventaId)).toEqual({ devoluciones_activas: 1, monto_devuelto: RETURN_TOTAL });
  });

  it('books each return once when squaring races its created event', async () => {
    const sales = await Promise.all(Array.from({ length: 12 }, saleWithCommittedReturn));
    await Promise.all(
      sales.flatMap(({ ventaId, clave, idDevolucion }, i) => {
        const square = () => sut['sales.sale.return.square']({ id_venta: ventaId }, ctx);
        const publish = () => publishCreated(ventaId, clave, idDevolucion);
        return i % 2 === 0 ? [square(), publish()] : [publish(), square()];
      }),
    );
    await consumerAtRest();
    for (const { ventaId } of sales) expect(await booksOf(ventaId)).toEqual({ devoluciones_activas: 1, monto_devuelto: RETURN_TOTAL });
  });
});
