import { sql } from 'kysely';
import { isAppError } from '@erp/contracts';
import { tenant, type Harness } from '@erp/testing';
import type { SalesDb } from '../src/db/tables';
import { runVentaPipeline, type VentaOutcome } from '../src/flows/venta-pipeline.flow';
import { serveInventory, stubReserva } from './inventory-stub';
import { ANA, saleRequest, salesHarness, seedSales } from './sales.factories';

const ctx = tenant(1, { usuario: ANA });

/** Product inventory refuses to reserve: not enough stock. */
const AGOTADO = 7;

describe('runVentaPipeline against Postgres and NATS', () => {
  let h: Harness<SalesDb>;
  let documentoId: number;
  let canalId: number;
  const asked: string[][] = [];
  const released: string[] = [];

  const request = (referencia: string, idProducto: number, cantidad = 1) =>
    saleRequest({ documentoId, canalId }, { referencia_externa: referencia, detalles: [{ id_producto: idProducto, cantidad }] });
  const sut = (reqs: ReturnType<typeof request>[]) => runVentaPipeline({ db: h.db, bus: h.bus }, reqs, ctx);
  const correlativos = (outcomes: VentaOutcome[]) => outcomes.map((o) => ('venta' in o ? o.venta.correlativo : undefined));
  const nextNumber = async () =>
    (await h.db.selectFrom('documentos').select('correlativo').where('id', '=', documentoId).executeTakeFirstOrThrow()).correlativo;

  beforeAll(async () => {
    h = await salesHarness('venta_pipeline');
    const now = new Date().toISOString();
    serveInventory(h.bus, {
      'inventory.stock.reserve-many': async ({ reservas }) => {
        asked.push(reservas.map((r) => r.clave));
        return {
          resultados: reservas.map((r) =>
            r.lineas.some((l) => l.id_producto === AGOTADO)
              ? {
                  clave: r.clave,
                  error: {
                    code: 'BUSINESS_RULE',
                    reason: 'stock_insuficiente',
                    message: 'Stock insuficiente',
                    details: { 'lineas.0': ['Sin stock'] },
                  },
                }
              : { clave: r.clave, reserva: stubReserva(r.clave, 'reservada', r.id_bodega, now) },
          ),
        };
      },
      'inventory.stock.release': async ({ clave }) => {
        released.push(clave);
        return stubReserva(clave, 'liberada', 2, now);
      },
    });
    ({ documentoId, canalId } = await seedSales(h.db, h.bus, ctx));
  });

  afterAll(() => h?.close());

  beforeEach(() => {
    asked.length = 0;
    released.length = 0;
  });

  it('writes a group as each venta alone would be: one refused by inventory leaves the others written and numbered in order', async () => {
    const before = await nextNumber();
    const outcomes = await sut([request('G-1', 5), request('G-2', AGOTADO), request('G-3', 5)]);
    expect(correlativos(outcomes)).toEqual([`F-${before}`, undefined, `F-${before + 1}`]);
    const refusal = (outcomes[1] as { error: unknown }).error;
    expect(isAppError(refusal) && [refusal.reason, refusal.details]).toEqual(['stock_insuficiente', { 'detalles.0': ['Sin stock'] }]);
    // All three asked in one request; the refused one took nothing, so nothing is released.
    expect(asked.map((claves) => claves.length)).toEqual([3]);
    expect(released).toEqual([]);
    expect(await nextNumber()).toBe(before + 2);
  });

  it('answers a group sent again with the ventas it wrote, taking no stock', async () => {
    const first = await sut([request('R-1', 5), request('R-2', 5)]);
    asked.length = 0;
    const again = await sut([request('R-1', 5), request('R-2', 5)]);
    expect(again.map((o) => 'venta' in o && [o.venta.id, o.idempotent])).toEqual(first.map((o) => 'venta' in o && [o.venta.id, true]));
    expect(asked).toEqual([]);
  });

  it('retries a transaction that failed to serialize from clean state, each venta’s stock taken once under the key it is written with', async () => {
    // The first insert of a line of 17 units fails as a serialization failure would; its retry
    // succeeds (a sequence counts the tries: a rollback does not undo it).
    await sql`create sequence sales.tries_of_17`.execute(h.db);
    await sql`create function sales.fail_once_on_17() returns trigger language plpgsql as $$
      begin
        if new.cantidad = 17 and nextval('sales.tries_of_17') = 1 then
          raise exception 'could not serialize access' using errcode = 'serialization_failure';
        end if;
        return new;
      end $$`.execute(h.db);
    await sql`create trigger fail_once_on_17 before insert on sales.venta_detalles for each row execute function sales.fail_once_on_17()`.execute(
      h.db,
    );
    try {
      const before = await nextNumber();
      const outcomes = await sut([request('S-1', 5, 17), request('S-2', 5)]);
      expect(correlativos(outcomes)).toEqual([`F-${before}`, `F-${before + 1}`]);
      expect(asked).toHaveLength(1);
      const claves = await h.db
        .selectFrom('ventas')
        .select('clave_reserva')
        .where('referencia_externa', 'in', ['S-1', 'S-2'])
        .orderBy('numero')
        .execute();
      expect(claves.map((c) => c.clave_reserva)).toEqual(asked[0]);
      expect((await sql<{ n: string }>`select last_value::text as n from sales.tries_of_17`.execute(h.db)).rows).toEqual([{ n: '2' }]);
      expect(released).toEqual([]);
    } finally {
      await sql`drop trigger fail_once_on_17 on sales.venta_detalles`.execute(h.db);
      await sql`drop function sales.fail_once_on_17()`.execute(h.db);
      await sql`drop sequence sales.tries_of_17`.execute(h.db);
    }
  });
});
