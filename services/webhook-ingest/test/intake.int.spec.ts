import { webhookSubjects } from '@erp/contracts';
import { harness, type Harness } from '@erp/testing';
import { Unprocessable } from '../src/domain/failures';
import { published, wooHeaders, wooPing } from './platform.factories';
import { receive as receiveOn, startWebhookIngest } from './webhook-ingest.factories';

const SECRET = 'woo-secret-intake-0123';
/** Far longer than any test here: a replica that sees a change does so by its event, not by expiry. */
const TOKEN_CACHE_TTL_MS = 60_000;

describe('webhook intake with two replicas', () => {
  let h: Harness<unknown>;
  let woo: { id: number; token: string };

  beforeAll(async () => {
    h = await harness('intake');
    // Processing is not under test: every delivery fails at once, which leaves the inbox as it was stored.
    const deps = {
      context: async () => {
        throw new Unprocessable('sin contexto en esta prueba');
      },
    };
    for (let i = 0; i < 2; i++) await startWebhookIngest(h, { WEBHOOK_CACHE_TTL_MS: TOKEN_CACHE_TTL_MS }, { deps });
    woo = (await seed('woo')).woo!;
  });

  afterAll(() => h?.close());

  const seed = async (ref: string, token?: string) =>
    (
      await h.bus.request(
        webhookSubjects,
        'webhooks.admin.seed',
        {
          empresa_id: 7,
          refs: { usuarios: { tienda: 11 }, sucursales: { centro: 1 }, bodegas: { principal: 2 }, documentos: { factura: 3 } },
          integraciones: [
            {
              ref,
              plataforma: 'woocommerce',
              usuario: 'tienda',
              sucursal: 'centro',
              bodega: 'principal',
              documento: 'factura',
              secreto: SECRET,
              ...(token ? { token } : {}),
            },
          ],
        },
        { requestId: 'seed' },
      )
    ).integraciones;

  const receive = (token: string, body: string, headers: Record<string, string>) => receiveOn(h.bus, 'woocommerce', token, body, headers);
  /** WooCommerce's published order 727 (fixtures/platforms), under another order id. */
  const order = (id: number) => {
    const body = published('woocommerce/order-727.json', [['"id": 727,', `"id": ${id},`]]);
    return { body, headers: wooHeaders(body, 'order.created', SECRET) };
  };
  /** Answers of `n` pings with the token, spread over both replicas by the queue group: 'ok' or the error code. */
  const pings = async (token: string, n = 30) => {
    const ping = wooPing(5);
    return Promise.all(
      Array.from({ length: n }, () =>
        receive(token, ping.body, ping.headers).then(
          () => 'ok',
          (err: { code?: string }) => err.code ?? 'error',
        ),
      ),
    );
  };
  /** Polls until every one of a round of pings answers `expected`; how long that took (ms). */
  const until = async (token: string, expected: string, timeoutMs = 5_000) => {
    const started = Date.now();
    for (;;) {
      const answers = await pings(token);
      if (answers.every((a) => a === expected)) return Date.now() - started;
      if (Date.now() - started > timeoutMs) throw new Error(`still ${JSON.stringify([...new Set(answers)])} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 50));
    }
  };

  it('stores a burst of orders, each sent three times at once to either replica, once each: one recibida, two duplicates with its id, one event', async () => {
    const orders = Array.from({ length: 150 }, (_, i) => order(50_000 + i));
    const answers = await Promise.all(orders.flatMap((d) => [0, 1, 2].map(() => receive(woo.token, d.body, d.headers))));

    const ids = new Set<number>();
    orders.forEach((_, i) => {
      const mine = answers.slice(i * 3, i * 3 + 3);
      expect(mine.map((a) => a.estado).sort()).toEqual(['duplicada', 'duplicada', 'recibida']);
      expect(new Set(mine.map((a) => a.id_entrega)).size).toBe(1);
      expect(mine[0]!.id_entrega).toEqual(expect.any(Number));
      ids.add(mine[0]!.id_entrega!);
    });
    expect(ids.size).toBe(150);
    const stored = await h.pool.query<{ id: number; referencia: string }>(
      'select id, referencia from webhook_ingest.entregas where id = any($1)',
      [[...ids]],
    );
    expect(stored.rows).toHaveLength(150);
    expect(new Set(stored.rows.map((r) => r.referencia)).size).toBe(150);
    expect((await h.pool.query('select count(*)::int as n from webhook_ingest.entregas')).rows[0].n).toBe(150);
    const events = await h.pool.query<{ id_entrega: number; n: number }>(
      `select (payload->>'id_entrega')::int as id_entrega, count(*)::int as n from webhook_ingest.outbox
        where subject = 'intake.webhooks.delivery.received' group by 1`,
    );
    expect(events.rows).toHaveLength(150);
    expect(events.rows.every((r) => r.n === 1 && ids.has(r.id_entrega))).toBe(true);
  });

  it('stores the deliveries of a batch that one of them breaks: only that one fails', async () => {
    const good = Array.from({ length: 20 }, (_, i) => order(70_000 + i));
    const bad = order(70_100);
    // A header Postgres cannot keep in jsonb (U+0000): the gateway never forwards one, a caller on the bus could.
    const answers = await Promise.allSettled([
      ...good.map((d) => receive(woo.token, d.body, d.headers)),
      receive(woo.token, bad.body, { ...bad.headers, 'x-wc-webhook-source': 'https://tienda\u0000.example' }),
    ]);
    expect(answers.slice(0, 20).map((a) => a.status === 'fulfilled' && a.value.estado)).toEqual(
      Array.from({ length: 20 }, () => 'recibida'),
    );
    expect(answers[20]).toMatchObject({ status: 'rejected' });
    const stored = await h.pool.query(`select count(*)::int as n from webhook_ingest.entregas where referencia like 'woo-70%'`);
    expect(stored.rows[0].n).toBe(20);
  });

  it('answers a delivery stored before as a duplicate with its id, whichever replica took it first', async () => {
    const d = order(60_000);
    const first = await receive(woo.token, d.body, d.headers);
    expect(first).toEqual({ estado: 'recibida', id_entrega: expect.any(Number) });
    const again = await Promise.all(Array.from({ length: 6 }, () => receive(woo.token, d.body, d.headers)));
    expect(again).toEqual(Array.from({ length: 6 }, () => ({ estado: 'duplicada', id_entrega: first.id_entrega })));
  });

  it('a rotated token stops working in both replicas though both had it cached, long before the cache expires', async () => {
    const { woo2 } = await seed('woo2');
    expect(await until(woo2!.token, 'ok')).toBeLessThan(2_000);
    await h.bus.request(webhookSubjects, 'webhooks.admin.integration.rotate-token', { id: woo2!.id }, { requestId: 'rotate' });
    expect(await until(woo2!.token, 'UNAUTHORIZED')).toBeLessThan(2_000);
  });

  it('a token both replicas remembered as unknown works in both once an integration is created with it', async () => {
    const token = 'wh_intake_token_created_later_0001';
    expect(new Set(await pings(token))).toEqual(new Set(['UNAUTHORIZED']));
    await seed('later', token);
    expect(await until(token, 'ok')).toBeLessThan(2_000);
  });
});
