import { randomUUID } from 'node:crypto';
import { provisionJetStream, publishEvent } from '@erp/bus';
import { returnsForSalesSubjects } from '@erp/contracts';
import { tenant, type Harness } from '@erp/testing';
import { RETURNS_CONSUMERS, startReturnsConsumers } from '../src/consumers/returns.consumer';
import type { SalesDb } from '../src/db/tables';
import { createVentaHandler } from '../src/handlers/create-venta.handler';
import { returnRegistrationHandlers } from '../src/handlers/return-registration.handlers';
import { serveInventory } from './inventory-stub';
import { ANA, saleRequest, salesHarness, seedSales } from './sales.factories';

const ctx = tenant(1, { usuario: ANA });
const RETURN_TOTAL = '19.95';

/**
 * A return registers with its sale before it commits, and its created event later books its amount.
 * When the sale's registrations are squared (by an annulment, an update or the sweeper) before that
 * event arrives — it comes back only after its ack wait when sales died delivering it — the sale
 * must not count the return without its amount, and the event must not book it a second time.
 */
describe('return registrations squared before or while their created event is consumed', () => {
  let h: Harness<SalesDb>;
  let createVenta: ReturnType<typeof createVentaHandler>;
  let sut: ReturnType<typeof returnRegistrationHandlers>;
  let documentoId: number;
  let canalId: number;
  /** Returns committed by the returns stand-in: registration key → return id. */
  const committed = new Map<string, number>();
  let nextReturnId = 1;

  beforeAll(async () => {
    h = await salesHarness('sales');
    serveInventory(h.bus);
    h.bus.serve(
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
    ({ documentoId, canalId } = await seedSales(h.db, h.bus, ctx));
    createVenta = createVentaHandler({ db: h.db, bus: h.bus });
    sut = returnRegistrationHandlers(h.db, h.bus);
    // The stream and the durables as the migration step makes them.
    await provisionJetStream(h.bus, ['sales']);
    await startReturnsConsumers(h.db, h.bus);
  });

  afterAll(() => h?.close());

  /** A sale with one registered return that has committed (as the returns service would answer). */
  const saleWithCommittedReturn = async () => {
    const { venta } = await createVenta(saleRequest({ documentoId, canalId }, { detalles: [{ id_producto: 5, cantidad: 2 }] }), ctx);
    const clave = randomUUID();
    await sut['sales.sale.return.register']({ id_venta: venta.id, clave }, ctx);
    const idDevolucion = nextReturnId++;
    committed.set(clave, idDevolucion);
    return { ventaId: venta.id, clave, idDevolucion };
  };
  const publishCreated = (ventaId: number, clave: string, idDevolucion: number) =>
    publishEvent(
      h.bus,
      'events.returns.return.created',
      { empresa_id: 1, id_devolucion: idDevolucion, id_venta: ventaId, total: RETURN_TOTAL, clave_registro: clave },
      { msgId: randomUUID() },
    );
  const booksOf = async (ventaId: number) =>
    h.db.selectFrom('ventas').select(['devoluciones_activas', 'monto_devuelto']).where('id', '=', ventaId).executeTakeFirstOrThrow();
  /** Waits until the created events' consumer has acknowledged everything published to it. */
  const consumerAtRest = () => h.untilConsumed(RETURNS_CONSUMERS['events.returns.return.created']);

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
