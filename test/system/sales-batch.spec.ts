import pg from 'pg';
import type { SeedOutput } from '@erp/back-office';
import { eventually } from '@erp/testing';
import { Stack, json } from '../support/stack';
import {
  API,
  SALES_KEY_A,
  SALES_KEY_STRICT,
  dataSnapshot,
  ledgerOf,
  postSale,
  refsOf,
  saleBody,
  salesFixture,
  type SalesRefs,
} from '../support/sales-fixture';

const KEY_LOTE = 'test_key_sales_lote_0123456789abcdef';
const KEY_UNO = 'test_key_sales_uno_0123456789abcdef';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Json = any;

/** Two companies identical but for their names, forbidding sales without stock: one gets the batch, the other the same sales one by one. */
function twinsFixture(): { empresas: unknown[] } {
  const base = salesFixture();
  const strict = base.empresas.find((e) => (e as { ref: string }).ref === 'd') as Record<string, unknown>;
  const twin = (ref: string, key: string) => ({
    ...structuredClone(strict),
    ref,
    nombre: `Ventas ${ref}`,
    api_keys: [{ ref: 'main', key, usuario: 'admin' }],
  });
  return { empresas: [...base.empresas, twin('lote', KEY_LOTE), twin('uno', KEY_UNO)] };
}

describe('POST /sales/batch: each sale as if sent alone, in order', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;

  const postBatch = async (key: string, body: unknown): Promise<{ status: number; headers: Headers; body: Json }> => {
    const res = await stack.api(`${API}/sales/batch`, {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json' },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, body: await json(res) };
  };

  /** The first row a statement answers. */
  const one = async (text: string, params: unknown[] = []) => (await stack.query(text, params))[0]!;

  /** Stock per product code and warehouse name, each document type's next number and the stock movements of one company. */
  const stateOf = async (empresaId: number) => ({
    stock: await stack.query(
      `select p.codigo, b.nombre, i.stock::text as stock from inventory.inventarios i
         join inventory.productos p on p.id = i.producto_id join inventory.bodegas b on b.id = i.bodega_id
        where p.empresa_id = $1 order by 1, 2`,
      [empresaId],
    ),
    correlativos: await stack.query('select nombre, correlativo from sales.documentos where empresa_id = $1 order by nombre', [empresaId]),
    // Every movement, in the order written: a sale refused along the way reserved and released nothing.
    movimientos: await stack.query(
      `select p.codigo, m.tipo, m.cantidad::text as cantidad, m.stock_resultante::text as stock from inventory.movimientos m
         join inventory.productos p on p.id = m.producto_id where p.empresa_id = $1 order by m.id`,
      [empresaId],
    ),
  });

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'] });
    seeded = await stack.seed(twinsFixture());
    a = refsOf(seeded, 'a');
  });
  afterAll(() => stack.stop());

  it('answers each sale with what POST /sales would have answered it, in the order sent', async () => {
    const res = await postBatch(SALES_KEY_A, {
      ventas: [
        saleBody(a, { referencia_externa: 'pedido-2001', detalles: [{ codigo_producto: 'MOU-01', cantidad: 2 }] }),
        saleBody(a, { referencia_externa: 'pedido-2002', detalles: [{ codigo_producto: 'NO-EXISTE', cantidad: 1 }] }),
      ],
    });
    expect(res.status).toBe(200);
    expect(res.body.data).toMatchObject({ creadas: 1, existentes: 0, rechazadas: 1 });
    expect(res.body.data.resultados).toEqual([
      {
        indice: 0,
        referencia_externa: 'pedido-2001',
        status: 201,
        data: expect.objectContaining({ referencia_externa: 'pedido-2001', total: 39.9 }),
      },
      {
        indice: 1,
        referencia_externa: 'pedido-2002',
        status: 422,
        error: expect.any(String),
        code: 422,
        reason: 'producto_no_encontrado',
        details: { 'detalles.0.codigo_producto': [expect.any(String)] },
      },
    ]);
  });

  it('answers good, refused, repeated and conflicting sales each as POST /sales does, leaving stock and correlatives as one by one', async () => {
    const ventas = (r: SalesRefs) => {
      const laptop = (referencia_externa: string, cantidad: number, over: Record<string, unknown> = {}) =>
        saleBody(r, { referencia_externa, detalles: [{ id_producto: r.productos.laptop, cantidad }], ...over });
      return [
        laptop('L-0', 5),
        laptop('L-1', 0),
        saleBody(r, { referencia_externa: 'L-2', detalles: [{ id_producto: 999_999, cantidad: 1 }] }),
        laptop('L-3', 5),
        laptop('L-4', 5),
        laptop('L-0', 5),
        laptop('L-0', 1),
        saleBody(r, { referencia_externa: 'EARLY-1', detalles: [{ id_producto: r.productos.mouse, cantidad: 1 }] }),
        saleBody(r, { referencia_externa: 'EARLY-2', detalles: [{ id_producto: r.productos.mouse, cantidad: 9 }] }),
        laptop('L-9', 2),
        saleBody(r, {
          referencia_externa: 'Q-10',
          estado: 'Cotizacion',
          id_documento: r.documentos.cotizacion,
          detalles: [{ id_producto: r.productos.laptop, cantidad: 3 }],
        }),
        laptop('L-11', 1, {
          estado: 'Pendiente',
          id_cliente: r.clientes.juan,
          detalles: [{ id_producto: r.productos.mouse, cantidad: 60 }],
        }),
        saleBody(r, {
          referencia_externa: 'L-12',
          id_documento: r.documentos.ticket,
          detalles: [{ id_producto: r.productos.mouse, cantidad: 3 }],
        }),
      ];
    };
    const lote = refsOf(seeded, 'lote');
    const uno = refsOf(seeded, 'uno');
    for (const [key, r] of [
      [KEY_LOTE, lote],
      [KEY_UNO, uno],
    ] as const) {
      for (const ref of ['EARLY-1', 'EARLY-2'])
        expect(
          (
            await postSale(
              stack,
              key,
              saleBody(r, { referencia_externa: ref, detalles: [{ id_producto: r.productos.mouse, cantidad: 1 }] }),
            )
          ).status,
        ).toBe(201);
    }

    const batch = await postBatch(KEY_LOTE, { ventas: ventas(lote) });
    const single: Array<{ status: number; body: Json }> = [];
    for (const body of ventas(uno)) single.push(await postSale(stack, KEY_UNO, body));

    expect(batch.status).toBe(200);
    const { resultados } = batch.body.data;
    expect(resultados.map((r: Json) => r.status)).toEqual([201, 422, 422, 201, 422, 200, 409, 200, 409, 201, 201, 422, 201]);
    expect(resultados.map((r: Json) => r.status)).toEqual(single.map((s) => s.status));
    expect(batch.body.data).toMatchObject({ creadas: 5, existentes: 2, rechazadas: 6 });
    resultados.forEach((r: Json, i: number) => {
      expect([r.indice, r.referencia_externa]).toEqual([i, ventas(lote)[i]!.referencia_externa]);
      const alone = single[i]!.body;
      if (r.status < 300) {
        expect(r.data).toMatchObject({ correlativo: alone.data.correlativo, total: alone.data.total, estado: alone.data.estado });
      } else {
        // The same envelope as the sale sent alone; only the ids of the other company's sales differ.
        const anonymous = (e: Json) =>
          JSON.parse(
            JSON.stringify({ error: e.error, code: e.code, reason: e.reason, details: e.details })
              .replace(/venta \d+/g, 'venta N')
              .replace(/"\d+"/g, '"N"'),
          );
        expect(anonymous(r)).toEqual(anonymous(alone));
        expect(r).not.toHaveProperty('data');
      }
    });
    expect(resultados[5].data.id).toBe(resultados[0].data.id);
    expect(resultados[6].details.id_venta).toEqual([String(resultados[0].data.id)]);
    expect(await stateOf(lote.id)).toEqual(await stateOf(uno.id));

    // Sent again, everything made answers 200 with its sale and nothing moves.
    const before = await dataSnapshot(stack);
    const again = await postBatch(KEY_LOTE, { ventas: ventas(lote) });
    expect(again.body.data.resultados.map((r: Json) => r.status)).toEqual([
      200, 422, 422, 200, 422, 200, 409, 200, 409, 200, 200, 422, 200,
    ]);
    expect(await dataSnapshot(stack)).toEqual(before);
  });

  it('gives each reference of two racing batches exactly one sale, its stock moved once, with consecutive correlatives', async () => {
    const mouse = a.productos.mouse!;
    const item = (n: number) =>
      saleBody(a, { referencia_externa: `R-${n}`, id_documento: a.documentos.ticket, detalles: [{ id_producto: mouse, cantidad: 1 }] });
    const [before] = await stack.query('select stock::int as stock from inventory.inventarios where producto_id = $1', [mouse]);
    const [x, y] = await Promise.all([
      postBatch(SALES_KEY_A, { ventas: Array.from({ length: 10 }, (_, i) => item(i)) }),
      postBatch(SALES_KEY_A, { ventas: Array.from({ length: 10 }, (_, i) => item(i + 5)) }),
    ]);
    const byRef = new Map<string, Json[]>();
    for (const r of [...x.body.data.resultados, ...y.body.data.resultados])
      byRef.set(r.referencia_externa, [...(byRef.get(r.referencia_externa) ?? []), r]);
    expect(byRef.size).toBe(15);
    for (const [ref, results] of byRef) {
      expect([ref, results.map((r) => r.status).sort()]).toEqual([ref, results.length === 2 ? [200, 201] : [201]]);
      expect(new Set(results.map((r) => r.data.id)).size).toBe(1);
    }
    const [after] = await stack.query('select stock::int as stock from inventory.inventarios where producto_id = $1', [mouse]);
    expect(after!.stock).toBe(before!.stock - 15);
    const numeros = (await stack.query("select numero from sales.ventas where referencia_externa like 'R-%' order by numero")).map(
      (r) => r.numero,
    );
    expect(numeros).toEqual(Array.from({ length: 15 }, (_, i) => numeros[0] + i));
  });

  it('refuses a sale whose document type is deactivated while its batch waits to number it: no number taken, its stock given back, the others made', async () => {
    const cemento = a.productos.cemento!;
    const principal = a.bodegas.principal!;
    const item = (n: number, documento: 'factura' | 'ticket') =>
      saleBody(a, {
        referencia_externa: `DOC-${n}`,
        id_documento: a.documentos[documento],
        detalles: [{ id_producto: cemento, cantidad: n + 1 }],
      });
    const ventas = [item(0, 'ticket'), item(1, 'factura'), item(2, 'ticket'), item(3, 'factura'), item(4, 'ticket')];
    const correlativo = async (documento: 'factura' | 'ticket') =>
      (await stack.query('select correlativo from sales.documentos where id = $1', [a.documentos[documento]]))[0]!.correlativo as number;
    const [factura, ticket] = [await correlativo('factura'), await correlativo('ticket')];
    const { stock: before } = await one('select stock::int as stock from inventory.inventarios where producto_id = $1 and bodega_id = $2', [
      cemento,
      principal,
    ]);
    const { id: lastMovimiento } = await one('select coalesce(max(id), 0)::int as id from inventory.movimientos');
    const { id: lastReserva } = await one('select coalesce(max(id), 0)::int as id from inventory.reservas');

    // The Factura is deactivated in a transaction the batch has to wait for: it resolved the sales
    // with the Factura active and reserved their stock, and finds it inactive once it locks it.
    const locker = new pg.Client({ connectionString: stack.iso.databaseUrl });
    await locker.connect();
    let batch: ReturnType<typeof postBatch>;
    try {
      await locker.query('begin');
      await locker.query('update sales.documentos set activo = false where id = $1', [a.documentos.factura]);
      batch = postBatch(SALES_KEY_A, { ventas });
      await eventually(async () => {
        const waiting = await stack.query<{ n: number }>(
          "select count(*)::int as n from pg_stat_activity where datname = current_database() and wait_event_type = 'Lock'",
        );
        expect(waiting[0]!.n).toBeGreaterThan(0);
      });
      await locker.query('commit');
    } finally {
      await locker.end();
    }
    try {
      const res = await batch;
      expect(res.status).toBe(200);
      const { resultados } = res.body.data;
      expect(resultados.map((r: Json) => [r.referencia_externa, r.status, r.reason ?? r.data.correlativo])).toEqual([
        ['DOC-0', 201, String(ticket)],
        ['DOC-1', 422, 'dato_relacionado_invalido'],
        ['DOC-2', 201, String(ticket + 1)],
        ['DOC-3', 422, 'dato_relacionado_invalido'],
        ['DOC-4', 201, String(ticket + 2)],
      ]);
      expect([await correlativo('factura'), await correlativo('ticket')]).toEqual([factura, ticket + 3]);
      expect(await stack.query("select count(*)::int as n from sales.ventas where referencia_externa like 'DOC-%'")).toEqual([{ n: 3 }]);

      // Each sale reserved its stock in order; the refused ones gave theirs back.
      const { stock: after } = await one(
        'select stock::int as stock from inventory.inventarios where producto_id = $1 and bodega_id = $2',
        [cemento, principal],
      );
      expect(after).toBe(before - (1 + 3 + 5));
      const movimientos = await stack.query(
        'select tipo, cantidad::int as cantidad from inventory.movimientos where producto_id = $1 and id > $2 order by id',
        [cemento, lastMovimiento],
      );
      expect(movimientos.filter((m) => m.tipo === 'reserva').map((m) => m.cantidad)).toEqual([-1, -2, -3, -4, -5]);
      expect(
        movimientos
          .filter((m) => m.tipo === 'liberacion')
          .map((m) => m.cantidad)
          .sort(),
      ).toEqual([2, 4]);
      expect(await ledgerOf(stack, cemento, principal)).toMatchObject({ stock: `${after}.000` });
      // Their reservations are released; the others' stay taken (confirmed once their sales' events arrive).
      await eventually(async () => {
        const reservas = await stack.query(
          "select estado, (lineas->0->>'cantidad')::numeric::int as cantidad from inventory.reservas where id > $1 and lineas @> $2::jsonb order by id",
          [lastReserva, JSON.stringify([{ id_producto: cemento }])],
        );
        expect(reservas.map((r) => [r.cantidad, r.estado])).toEqual([
          [1, 'confirmada'],
          [2, 'liberada'],
          [3, 'confirmada'],
          [4, 'liberada'],
          [5, 'confirmada'],
        ]);
      });
    } finally {
      await stack.query('update sales.documentos set activo = true where id = $1', [a.documentos.factura]);
    }
  });

  it('sells no more than there is to two batches racing for the last units: each sale made with its stock or refused stock_insuficiente, numbers without gaps', async () => {
    const d = refsOf(seeded, 'd');
    const libro = d.productos.libro!;
    const principal = d.bodegas.principal!;
    const cantidadOf = (n: number) => (n % 3 === 0 ? 2 : 1);
    const item = (n: number) =>
      saleBody(d, {
        referencia_externa: `SCARCE-${n}`,
        id_documento: d.documentos.ticket,
        detalles: [{ id_producto: libro, cantidad: cantidadOf(n) }],
      });
    const { stock: before } = await one('select stock::int as stock from inventory.inventarios where producto_id = $1 and bodega_id = $2', [
      libro,
      principal,
    ]);
    const { correlativo: first } = await one('select correlativo from sales.documentos where id = $1', [d.documentos.ticket]);
    const demand = Array.from({ length: 100 }, (_, n) => cantidadOf(n)).reduce((x, y) => x + y, 0);
    expect(demand).toBeGreaterThan(before);

    const [x, y] = await Promise.all([
      postBatch(SALES_KEY_STRICT, { ventas: Array.from({ length: 50 }, (_, i) => item(i)) }),
      postBatch(SALES_KEY_STRICT, { ventas: Array.from({ length: 50 }, (_, i) => item(50 + i)) }),
    ]);
    expect([x.status, y.status]).toEqual([200, 200]);
    const resultados: Json[] = [...x.body.data.resultados, ...y.body.data.resultados];
    const made = resultados.filter((r) => r.status === 201);
    const refused = resultados.filter((r) => r.status !== 201);
    expect(refused.map((r) => [r.status, r.reason])).toEqual(refused.map(() => [422, 'stock_insuficiente']));
    const cantidadOfRef = (r: Json) => cantidadOf(Number(r.referencia_externa.split('-')[1]));
    const sold = made.map(cantidadOfRef).reduce((p, q) => p + q, 0);

    const { stock: after } = await one('select stock::int as stock from inventory.inventarios where producto_id = $1 and bodega_id = $2', [
      libro,
      principal,
    ]);
    // No oversell: what was sold left the stock, and each refusal found less than it wanted (stock only went down).
    expect(after).toBe(before - sold);
    expect(after).toBeGreaterThanOrEqual(0);
    for (const r of refused) expect(cantidadOfRef(r)).toBeGreaterThan(after);
    expect(await ledgerOf(stack, libro, principal)).toMatchObject({ stock: `${after}.000` });
    // A refusal took nothing, so nothing was given back.
    const { n: releases } = await one(
      "select count(*)::int as n from inventory.movimientos where producto_id = $1 and tipo = 'liberacion'",
      [libro],
    );
    expect(releases).toBe(0);

    // Only the sales made took numbers, one after another in the order they were written.
    const ventas = await stack.query(
      "select numero, referencia_externa from sales.ventas where referencia_externa like 'SCARCE-%' order by numero",
    );
    expect(ventas.map((v) => v.referencia_externa).sort()).toEqual(made.map((r) => r.referencia_externa).sort());
    expect(ventas.map((v) => v.numero)).toEqual(made.map((_, i) => first + i));
    const { correlativo: next } = await one('select correlativo from sales.documentos where id = $1', [d.documentos.ticket]);
    expect(next).toBe(first + made.length);
  });

  it('counts a batch of 100 sales as one request of the quota', async () => {
    const mouse = a.productos.mouse!;
    const first = await stack.api(`${API}/sales/summary`, { key: SALES_KEY_A });
    const remaining = Number(first.headers.get('x-ratelimit-remaining'));
    const batch = await postBatch(SALES_KEY_A, {
      ventas: Array.from({ length: 100 }, (_, i) =>
        saleBody(a, { referencia_externa: `Q100-${i}`, detalles: [{ id_producto: mouse, cantidad: 1 }] }),
      ),
    });
    expect([batch.status, batch.body.data.creadas, Number(batch.headers.get('x-ratelimit-remaining'))]).toEqual([200, 100, remaining - 1]);
  });

  describe('refuses a body that is not a batch with 400 naming the item, writing nothing', () => {
    const cases: Array<[string, () => unknown, Record<string, string[]>]> = [
      ['not an object', () => [saleBody(a, { referencia_externa: 'E-1' })], { _: ['El cuerpo debe ser un objeto JSON'] }],
      ['ventas missing', () => ({}), { ventas: ['Es obligatorio'] }],
      ['no sales', () => ({ ventas: [] }), { ventas: ['Debe incluir al menos 1 venta'] }],
      [
        'more than 100 sales',
        () => ({ ventas: Array.from({ length: 101 }, (_, i) => saleBody(a, { referencia_externa: `E-${i}` })) }),
        { ventas: ['Debe incluir como máximo 100 ventas'] },
      ],
      [
        'a sale without referencia_externa',
        () => ({ ventas: [0, 1, 2, 3].map((i) => saleBody(a, i === 3 ? {} : { referencia_externa: `E-${i}` })) }),
        { 'ventas.3.referencia_externa': ['Es obligatorio'] },
      ],
      [
        'a sale that is not an object',
        () => ({ ventas: [saleBody(a, { referencia_externa: 'E-1' }), 7] }),
        { 'ventas.1': ['Cada venta debe ser un objeto JSON'] },
      ],
    ];
    it.each(cases)('%s', async (_label, body, details) => {
      const before = await dataSnapshot(stack);
      const res = await postBatch(SALES_KEY_A, body());
      expect([res.status, res.body]).toEqual([
        400,
        { success: false, error: 'Datos inválidos', code: 400, reason: 'cuerpo_invalido', details },
      ]);
      expect(await dataSnapshot(stack)).toEqual(before);
    });
  });

  it('refuses an unknown field beside ventas with 400 campo_desconocido naming it, writing nothing', async () => {
    const before = await dataSnapshot(stack);
    const res = await postBatch(SALES_KEY_A, { ventas: [saleBody(a, { referencia_externa: 'E-lote' })], lote: 'semana-12' });
    expect([res.status, res.body]).toEqual([
      400,
      { success: false, error: 'Datos inválidos', code: 400, reason: 'campo_desconocido', details: { lote: ['Campo desconocido'] } },
    ]);
    expect(await dataSnapshot(stack)).toEqual(before);
  });

  it('answers a sale with an unknown field 422 campo_desconocido naming it by its path, and makes the others', async () => {
    const before = await dataSnapshot(stack);
    const res = await postBatch(SALES_KEY_A, {
      ventas: [
        saleBody(a, { referencia_externa: 'typo-1', id_clientee: a.clientes.juan }),
        saleBody(a, { referencia_externa: 'typo-2', detalles: [{ id_producto: a.productos.mouse, cantidad: 1, descuentoo: 1 }] }),
        saleBody(a, { referencia_externa: 'typo-3' }),
      ],
    });
    expect(res.status).toBe(200);
    const [first, second, third] = res.body.data.resultados;
    expect(first).toEqual({
      indice: 0,
      referencia_externa: 'typo-1',
      status: 422,
      error: 'Datos inválidos',
      code: 422,
      reason: 'campo_desconocido',
      details: { id_clientee: ['Campo desconocido'] },
    });
    expect(second).toMatchObject({ status: 422, reason: 'campo_desconocido', details: { 'detalles.0.descuentoo': ['Campo desconocido'] } });
    expect(third).toMatchObject({ status: 201, data: { referencia_externa: 'typo-3' } });
    expect(res.body.data).toMatchObject({ creadas: 1, rechazadas: 2 });
    const [stored] = await stack.query(
      `select array_agg(referencia_externa order by referencia_externa) as refs from sales.ventas where referencia_externa like 'typo-%'`,
    );
    expect(stored).toEqual({ refs: ['typo-3'] });
    expect((await dataSnapshot(stack)) as { ventas: number }).toMatchObject({ ventas: (before as { ventas: number }).ventas + 1 });
  });

  it('answers GET and PUT on /sales/batch with 405', async () => {
    for (const method of ['GET', 'PUT']) {
      const res = await stack.api(`${API}/sales/batch`, {
        key: SALES_KEY_A,
        method,
        headers: { 'Content-Type': 'application/json' },
        ...(method === 'PUT' ? { body: '{}' } : {}),
      });
      expect([method, res.status, res.headers.get('allow')]).toEqual([method, 405, 'POST']);
    }
  });
});
