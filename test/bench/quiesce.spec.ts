import { SALES_KEY_A, postSale, refsOf, saleBody, salesFixture } from '../support/sales-fixture';
import { Stack } from '../support/stack';
import { quiesce } from './run/quiesce';

describe("the benchmark's wait for a scenario's asynchronous work", () => {
  let stack: Stack;
  afterAll(() => stack?.stop());

  it('returns once the events of the writes just made are published, consumed and logged', async () => {
    stack = await Stack.start({ subscriptions: { EVENTS_POLL_MS: '100' } });
    const a = refsOf(await stack.seed(salesFixture()), 'a');
    await stack.settled();
    const sales = await Promise.all(
      Array.from({ length: 10 }, () =>
        postSale(stack, SALES_KEY_A, saleBody(a, { detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }] })),
      ),
    );
    expect(sales.map((s) => s.status)).toEqual(Array(10).fill(201));
    const quiet = await quiesce({
      databaseUrl: stack.iso.databaseUrl,
      natsUrl: stack.iso.natsUrl,
      prefix: stack.iso.subjectPrefix,
      timeoutMs: 30_000,
    });
    expect(quiet.left).toEqual({ outbox: 0, consumers: 0, webhooks: 0, partners: 0 });
    // Settled means done: every sale's partner event is already in the log, with nothing waited for afterwards.
    const logged = await stack.query<{ n: number }>(`select count(*)::int as n from subscriptions.eventos where tipo = 'sale.created'`);
    expect(logged).toEqual([{ n: 10 }]);
  });
});
