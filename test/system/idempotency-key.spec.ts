import type { SeedOutput } from '@erp/back-office';
import { Stack } from '../support/stack';
import { eventually } from '@erp/testing';
import { API, SALES_KEY_A, SALES_KEY_B, dataSnapshot, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';

describe('Idempotency-Key on the POSTs of the partner API', () => {
  let stack: Stack;
  let seeded: SeedOutput;
  let a: SalesRefs;

  const post = async (path: string, body: unknown, headers: Record<string, string>, key = SALES_KEY_A) => {
    const res = await stack.api(`${API}${path}`, {
      key,
      method: 'POST',
      headers: { 'Content-Type': 'application/json', ...headers },
      body: JSON.stringify(body),
    });
    return { status: res.status, headers: res.headers, text: await res.text() };
  };
  const ventas = async () => (await stack.query('select count(*)::int as n from sales.ventas'))[0]!.n as number;

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'], gateway: { IDEMPOTENCY_PURGE_INTERVAL_MS: '100' } });
    seeded = await stack.seed(salesFixture());
    a = refsOf(seeded, 'a');
  });
  afterAll(() => stack.stop());

  it('answers the same request again with the first answer byte for byte, marked as a replay, running nothing', async () => {
    const body = saleBody(a, { detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }] });
    const first = await post('/sales', body, { 'Idempotency-Key': 'venta-1' });
    expect([first.status, first.headers.get('idempotent-replayed')]).toEqual([201, null]);
    const before = await dataSnapshot(stack);
    // The same request with its keys in another order, and the key as the draft's quoted string.
    const again = await post('/sales', Object.fromEntries(Object.entries(body).reverse()), { 'Idempotency-Key': '"venta-1"' });
    expect(JSON.parse(first.text).meta.idempotent).toBe(false);
    // The same bytes, but that this time nothing was made: meta.idempotent says so, as the header does.
    expect([again.status, again.text, again.headers.get('location'), again.headers.get('idempotent-replayed')]).toEqual([
      201,
      first.text.replace('"idempotent":false', '"idempotent":true'),
      first.headers.get('location'),
      'true',
    ]);
    expect(JSON.parse(again.text).meta.idempotent).toBe(true);
    expect(again.headers.get('x-ratelimit-remaining')).toBe(String(Number(first.headers.get('x-ratelimit-remaining')) - 1));
    expect(await dataSnapshot(stack)).toEqual(before);
  });

  it('repeats a refusal as well, and runs again a request whose answer was a 5xx', async () => {
    const body = saleBody(a, { detalles: [{ codigo_producto: 'NO-EXISTE', cantidad: 1 }] });
    const first = await post('/sales', body, { 'Idempotency-Key': 'venta-mala' });
    const again = await post('/sales', body, { 'Idempotency-Key': 'venta-mala' });
    expect([first.status, again.status, again.text === first.text, again.headers.get('idempotent-replayed')]).toEqual([
      422,
      422,
      true,
      'true',
    ]);

    await stack.stopService('sales');
    try {
      const down = await post('/sales', saleBody(a), { 'Idempotency-Key': 'venta-caida' });
      expect(down.status).toBe(503);
      expect(await stack.query("select * from gateway.idempotencia where clave = 'venta-caida'")).toEqual([]);
    } finally {
      await stack.startService('sales');
    }
    const retried = await post('/sales', saleBody(a), { 'Idempotency-Key': 'venta-caida' });
    expect([retried.status, retried.headers.get('idempotent-replayed')]).toEqual([201, null]);
  });

  it('refuses the key with another body or on another path with 409 naming the header, running nothing', async () => {
    const body = saleBody(a, { detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }] });
    expect((await post('/sales', body, { 'Idempotency-Key': 'venta-2' })).status).toBe(201);
    const before = await dataSnapshot(stack);
    const other = await post('/sales', { ...body, observaciones: 'otra' }, { 'Idempotency-Key': 'venta-2' });
    const batch = await post('/sales/batch', { ventas: [{ ...body, referencia_externa: 'IK-1' }] }, { 'Idempotency-Key': 'venta-2' });
    for (const refused of [other, batch]) {
      expect([refused.status, JSON.parse(refused.text)]).toEqual([
        409,
        {
          success: false,
          error: 'El Idempotency-Key ya se usó con otra solicitud',
          code: 409,
          reason: 'referencia_en_conflicto',
          details: { 'Idempotency-Key': [expect.stringContaining('otro método, ruta o cuerpo')] },
        },
      ]);
    }
    expect(await dataSnapshot(stack)).toEqual(before);
  });

  it('answers the same request while the first still runs with 409 and Retry-After, then with the first answer', async () => {
    const mouse = a.productos.mouse!;
    const body = {
      ventas: Array.from({ length: 30 }, (_, i) =>
        saleBody(a, { referencia_externa: `IK-LOTE-${i}`, detalles: [{ id_producto: mouse, cantidad: 1 }] }),
      ),
    };
    const first = post('/sales/batch', body, { 'Idempotency-Key': 'lote-1' });
    await eventually(
      async () => {
        expect(await stack.query("select status from gateway.idempotencia where clave = 'lote-1'")).toEqual([{ status: null }]);
      },
      10_000,
      10,
    );
    const during = await post('/sales/batch', body, { 'Idempotency-Key': 'lote-1' });
    expect([during.status, during.headers.get('retry-after'), JSON.parse(during.text).details]).toEqual([
      409,
      '1',
      { 'Idempotency-Key': ['La primera solicitud con este Idempotency-Key aún está en curso; reintente después de Retry-After'] },
    ]);
    const done = await first;
    expect(JSON.parse(done.text).data.creadas).toBe(30);
    const after = await post('/sales/batch', body, { 'Idempotency-Key': 'lote-1' });
    expect([after.status, after.text === done.text, after.headers.get('idempotent-replayed')]).toEqual([200, true, 'true']);
  });

  it('keeps keys per company', async () => {
    const b = refsOf(seeded, 'b');
    const res = await post('/sales', saleBody(b), { 'Idempotency-Key': 'venta-1' }, SALES_KEY_B);
    expect([res.status, res.headers.get('idempotent-replayed')]).toEqual([201, null]);
  });

  it('forgets a key after 24 hours: the key runs a new request, and the purge deletes it', async () => {
    const body = saleBody(a, { detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }] });
    expect((await post('/sales', body, { 'Idempotency-Key': 'vieja' })).status).toBe(201);
    // Just inside the 24 hours the key still answers; past them it is free for another request.
    await stack.query("update gateway.idempotencia set created_at = now() - interval '23 hours 59 minutes' where clave = 'vieja'");
    expect((await post('/sales', { ...body, observaciones: 'otra' }, { 'Idempotency-Key': 'vieja' })).status).toBe(409);
    await stack.query("update gateway.idempotencia set created_at = now() - interval '24 hours 1 minute' where clave = 'vieja'");
    const n = await ventas();
    const fresh = await post('/sales', { ...body, observaciones: 'otra' }, { 'Idempotency-Key': 'vieja' });
    expect([fresh.status, fresh.headers.get('idempotent-replayed'), await ventas()]).toEqual([201, null, n + 1]);

    await stack.query("update gateway.idempotencia set created_at = now() - interval '25 hours' where clave in ('vieja', 'venta-2')");
    await eventually(async () => {
      expect(
        (await stack.query("select clave from gateway.idempotencia where clave in ('vieja', 'venta-2', 'venta-1') order by clave")).map(
          (r) => r.clave,
        ),
      ).toEqual(['venta-1', 'venta-1']);
    });
  });

  describe('refuses a malformed key with 400 naming the header, running nothing', () => {
    it.each([
      ['empty', '', 'No puede estar vacío'],
      ['over 255 characters', 'k'.repeat(256), 'Debe tener como máximo 255 caracteres'],
    ])('%s', async (_label, value, problem) => {
      const before = await dataSnapshot(stack);
      const res = await post('/sales', saleBody(a), { 'Idempotency-Key': value });
      expect([res.status, JSON.parse(res.text)]).toEqual([
        400,
        {
          success: false,
          error: 'Encabezado Idempotency-Key inválido',
          code: 400,
          reason: 'parametro_invalido',
          details: { 'Idempotency-Key': [problem] },
        },
      ]);
      expect(await dataSnapshot(stack)).toEqual(before);
    });
  });
});
