import { isAppError, returnsAdminSubjects, salesAdminSubjects, salesForReturnsSubjects } from '@erp/contracts';
import { setTimeout as sleep } from 'node:timers/promises';
import { Stack, json } from '../support/stack';
import { eventually, tenant } from '@erp/testing';
import { API, SALES_KEY_A, ledgerOf, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';
import { stockOf } from '../../services/inventory/test/inventory.factories';

/** Rounds of the race; each is one sale, a return of all of it and an annulment or a PUT of it at the same moment. */
const ROUNDS = Number(process.env.RETURNS_RACE_ROUNDS ?? 240);
/** Rounds in flight at once. */
const PARALLEL = 4;
const ctx = { requestId: 'returns-race' };

/**
 * Guarantee 5 across services: a return and an annulment (or a PUT that changes quantities) of
 * the same sale serialise on the sale, so the stock the sale held comes back exactly once:
 * either the return wins and the other change is refused, or the change wins and the return is
 * refused (or fits what the sale still holds).
 */
describe('a return racing an annulment or an update of the same sale', () => {
  let stack: Stack;
  let a: SalesRefs;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales', 'returns'] });
    a = refsOf(await stack.seed({ empresas: [salesFixture().empresas[0]] }), 'a');
  });
  afterAll(() => stack.stop());

  /** `ok` when the change went through, `refused` when it was refused as a business rule (422); anything else fails the test. */
  const outcome = async (promise: Promise<unknown>): Promise<'ok' | 'refused'> => {
    try {
      const value = (await promise) as { status?: number; body?: unknown };
      if (value.status === undefined || value.status === 200) return 'ok';
      if (value.status === 422) return 'refused';
      throw new Error(`PUT answered ${value.status}: ${JSON.stringify(value.body)}`);
    } catch (err) {
      if (isAppError(err) && err.code === 'BUSINESS_RULE') return 'refused';
      throw err;
    }
  };

  async function round(i: number): Promise<string> {
    const mouse = a.productos.mouse!;
    const created = await postSale(
      stack,
      SALES_KEY_A,
      saleBody(a, {
        referencia_externa: `race-${i}`,
        // Only a Pendiente sale can be updated.
        ...(i % 2 === 0 ? {} : { estado: 'Pendiente', id_cliente: a.clientes.libre }),
        detalles: [{ id_producto: mouse, cantidad: 3 }],
      }),
    );
    if (created.status !== 201) throw new Error(`sale of round ${i}: ${created.status} ${JSON.stringify(created.body)}`);
    const venta = created.body.data;
    // One side starts up to 60 ms after the other, so each side wins some rounds.
    const offset = ((Math.floor(i / 2) % 13) - 6) * 10;
    const devolver = sleep(Math.max(-offset, 0)).then(() =>
      stack.admin.request(
        returnsAdminSubjects,
        'returns.admin.create',
        {
          empresa_id: a.id,
          id_venta: venta.id,
          fecha: '2026-03-11',
          tipo: 'devolucion',
          referencia: `race-${i}`,
          detalles: [{ id_producto: mouse, cantidad: 3 }],
        } as never,
        ctx,
      ),
    );
    const change = sleep(Math.max(offset, 0)).then((): Promise<unknown> =>
      i % 2 === 0
        ? stack.admin.request(salesAdminSubjects, 'sales.admin.annul', { empresa_id: a.id, id_venta: venta.id }, ctx)
        : stack
            .api(`${API}/sales/${venta.id}`, {
              key: SALES_KEY_A,
              method: 'PUT',
              headers: { 'Content-Type': 'application/json' },
              body: JSON.stringify({ detalles: [{ id: venta.detalles[0].id, cantidad: 1 }] }),
            })
            .then(async (res) => ({ status: res.status, body: await json(res) })),
    );
    const [ret, other] = await Promise.all([outcome(devolver), outcome(change)]);
    return `${i % 2 === 0 ? 'annul' : 'put'}: return ${ret}, change ${other}`;
  }

  it(`returns the sale's stock exactly once over ${ROUNDS} rounds`, async () => {
    const mouse = a.productos.mouse!;
    const principal = a.bodegas.principal!;
    const initial = Number(await stockOf(stack, mouse, principal));
    const outcomes = new Map<string, number>();
    let next = 0;
    await Promise.all(
      Array.from({ length: PARALLEL }, async () => {
        while (next < ROUNDS) {
          const seen = await round(next++);
          outcomes.set(seen, (outcomes.get(seen) ?? 0) + 1);
        }
      }),
    );

    // At rest: every event published and consumed, every return's stock settled.
    await stack.settled(30_000);

    // Per sale: what its active returns gave back never exceeds what the sale still holds.
    const perSale = await stack.query<{ id: number; estado: string; held: string; returned: string }>(
      `select v.id, v.estado,
              (case when v.estado in ('Completada', 'Pendiente') then (select coalesce(sum(d.cantidad), 0) from sales.venta_detalles d where d.venta_id = v.id and d.mueve_stock) else 0 end)::text as held,
              (select coalesce(sum(l.cantidad), 0) from returns.devoluciones r join returns.devolucion_detalles l on l.devolucion_id = r.id where r.venta_id = v.id and r.enable and l.mueve_stock)::text as returned
       from sales.ventas v where v.empresa_id = $1 and v.referencia_externa like 'race-%' order by v.id`,
      [a.id],
    );
    expect(perSale).toHaveLength(ROUNDS);
    const twice = perSale.filter((s) => Number(s.returned) > Number(s.held));
    expect({ twice, outcomes: Object.fromEntries(outcomes) }).toEqual({ twice: [], outcomes: expect.any(Object) });
    // The race was run: for each kind of change, some rounds went to the return and some to the change.
    for (const kind of ['annul', 'put']) {
      expect(outcomes.get(`${kind}: return ok, change refused`)).toBeGreaterThan(0);
      expect(outcomes.get(`${kind}: return refused, change ok`)).toBeGreaterThan(0);
    }

    // The product's stock is the opening stock less what live sales hold plus what active returns gave back, and equals its ledger.
    const held = perSale.reduce((s, r) => s + Number(r.held), 0);
    const returned = perSale.reduce((s, r) => s + Number(r.returned), 0);
    const expected = (initial - held + returned).toFixed(3);
    expect(await stockOf(stack, mouse, principal)).toBe(expected);
    expect((await ledgerOf(stack, mouse, principal)).stock).toBe(expected);
  }, 600_000);

  it('stops counting a registration whose return never committed: a refused return, or one whose process died before its commit', async () => {
    const mouse = a.productos.mouse!;
    const sale = async (ref: string, extra: Record<string, unknown> = {}) => {
      const created = await postSale(
        stack,
        SALES_KEY_A,
        saleBody(a, { referencia_externa: ref, detalles: [{ id_producto: mouse, cantidad: 3 }], ...extra }),
      );
      expect(created.status).toBe(201);
      return created.body.data;
    };
    const activas = async (id: number) =>
      (await stack.query<{ n: number }>('select devoluciones_activas as n from sales.ventas where id = $1', [id]))[0]!.n;
    const registrations = async (id: number) =>
      (
        await stack.query<{ estado: string }>('select estado from sales.devoluciones_registradas where venta_id = $1 order by created_at', [
          id,
        ])
      ).map((r) => r.estado);

    // Refused after registering (more than was sold): the sale does not count it, and can be updated.
    const pendiente = await sale('registro-rechazado', { estado: 'Pendiente', id_cliente: a.clientes.libre });
    const refused = await stack.admin
      .request(
        returnsAdminSubjects,
        'returns.admin.create',
        {
          empresa_id: a.id,
          id_venta: pendiente.id,
          fecha: '2026-03-11',
          tipo: 'devolucion',
          detalles: [{ id_producto: mouse, cantidad: 4 }],
        } as never,
        ctx,
      )
      .catch((err: unknown) => err);
    expect(isAppError(refused) && refused.code).toBe('BUSINESS_RULE');
    expect([await activas(pendiente.id), await registrations(pendiente.id)]).toEqual([0, ['descartada']]);
    const put = await stack.api(`${API}/sales/${pendiente.id}`, {
      key: SALES_KEY_A,
      method: 'PUT',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify({ detalles: [{ id: pendiente.detalles[0].id, cantidad: 1 }] }),
    });
    expect(put.status).toBe(200);

    // Registered, then the returns service died before committing: the annulment asks, and discards it.
    const completada = await sale('registro-huerfano');
    const before = await stockOf(stack, mouse, a.bodegas.principal!);
    await stack.query(`insert into sales.devoluciones_registradas (empresa_id, clave, venta_id) values ($1, 'devolucion-sin-commit', $2)`, [
      a.id,
      completada.id,
    ]);
    await stack.query('update sales.ventas set devoluciones_activas = devoluciones_activas + 1 where id = $1', [completada.id]);
    expect(
      await stack.admin.request(salesAdminSubjects, 'sales.admin.annul', { empresa_id: a.id, id_venta: completada.id }, ctx),
    ).toMatchObject({ estado: 'Anulada' });
    expect([await activas(completada.id), await registrations(completada.id)]).toEqual([0, ['descartada']]);
    expect(Number(await stockOf(stack, mouse, a.bodegas.principal!))).toBe(Number(before) + 3);

    // The same orphan on a sale nobody touches again: the sweeper squares it once it is old enough.
    const olvidada = await sale('registro-olvidado');
    await stack.query(`insert into sales.devoluciones_registradas (empresa_id, clave, venta_id) values ($1, 'devolucion-olvidada', $2)`, [
      a.id,
      olvidada.id,
    ]);
    await stack.query('update sales.ventas set devoluciones_activas = devoluciones_activas + 1 where id = $1', [olvidada.id]);
    expect(await activas(olvidada.id)).toBe(1);
    await eventually(
      async () => expect([await activas(olvidada.id), await registrations(olvidada.id)]).toEqual([0, ['descartada']]),
      15_000,
    );

    // A committed return whose event sales has not consumed yet keeps counting: the annulment is refused.
    const devuelta = await sale('registro-confirmado');
    const { devolucion } = await stack.admin.request(
      returnsAdminSubjects,
      'returns.admin.create',
      {
        empresa_id: a.id,
        id_venta: devuelta.id,
        fecha: '2026-03-11',
        tipo: 'devolucion',
        detalles: [{ id_producto: mouse, cantidad: 1 }],
      } as never,
      ctx,
    );
    await stack.query(`update sales.devoluciones_registradas set estado = 'registrada', id_devolucion = null where venta_id = $1`, [
      devuelta.id,
    ]);
    const annul = await stack.admin
      .request(salesAdminSubjects, 'sales.admin.annul', { empresa_id: a.id, id_venta: devuelta.id }, ctx)
      .catch((err: unknown) => err);
    expect(isAppError(annul) && annul.code).toBe('BUSINESS_RULE');
    expect(
      await stack.query('select estado, id_devolucion from sales.devoluciones_registradas where venta_id = $1', [devuelta.id]),
    ).toEqual([{ estado: 'confirmada', id_devolucion: devolucion.id }]);
    expect(await activas(devuelta.id)).toBe(1);
  });

  it('counts a registration once under the same key, never on a sale that cannot be returned, and squares it away when no return came of it', async () => {
    const asA = tenant(a.id, { requestId: 'returns-race-register' });
    const register = (id_venta: number, clave: string) =>
      stack.admin.request(salesForReturnsSubjects, 'sales.sale.return.register', { id_venta, clave }, asA);
    const activas = async (id: number) =>
      (await stack.query<{ n: number }>('select devoluciones_activas as n from sales.ventas where id = $1', [id]))[0]!.n;
    const created = await postSale(
      stack,
      SALES_KEY_A,
      saleBody(a, { referencia_externa: 'registro-repetido', detalles: [{ id_producto: a.productos.mouse!, cantidad: 2 }] }),
    );
    const venta = created.body.data;

    const first = await register(venta.id, 'devolucion-repetida');
    expect(first).toMatchObject({
      id: venta.id,
      estado: 'Completada',
      detalles: [expect.objectContaining({ id: venta.detalles[0].id, cantidad: '2.0000' })],
    });
    await register(venta.id, 'devolucion-repetida');
    expect(await activas(venta.id)).toBe(1);
    // No return was made under that key: squaring discards it, and the sale can be annulled.
    expect(await stack.admin.request(salesForReturnsSubjects, 'sales.sale.return.square', { id_venta: venta.id }, asA)).toEqual({
      devoluciones_activas: 0,
    });
    expect(await stack.admin.request(salesAdminSubjects, 'sales.admin.annul', { empresa_id: a.id, id_venta: venta.id }, ctx)).toMatchObject(
      { estado: 'Anulada' },
    );
    // An annulled sale registers nothing (the returns service refuses it).
    expect(await register(venta.id, 'devolucion-tardia')).toMatchObject({ estado: 'Anulada' });
    expect(await activas(venta.id)).toBe(0);
    expect(
      await stack.query('select clave, estado from sales.devoluciones_registradas where venta_id = $1 order by clave', [venta.id]),
    ).toEqual([{ clave: 'devolucion-repetida', estado: 'descartada' }]);
  });
});
