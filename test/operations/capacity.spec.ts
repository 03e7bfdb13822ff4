import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { eventually } from '@erp/testing';
import { Stack } from '../support/stack';
import { SALES_KEY_A, postSale, refsOf, saleBody, salesFixture, type SalesRefs } from '../support/sales-fixture';

const CAPACITY = readFileSync(resolve(__dirname, '../../docs/capacity.md'), 'utf8');

/** The SQL block that follows `<!-- capacity: NAME -->` in docs/capacity.md. */
function capacityQuery(name: string): string {
  const match = new RegExp(`<!-- capacity: ${name} -->\\n\`\`\`sql\\n([\\s\\S]*?)\`\`\``).exec(CAPACITY);
  if (!match) throw new Error(`docs/capacity.md has no block marked capacity: ${name}`);
  return match[1]!;
}

/**
 * docs/capacity.md's query for sales waiting on their document type's correlative lock, run as an
 * operator would during a peak: it counts a real `POST /sales` held at the numbering statement, and
 * nothing once the lock is free.
 */
describe('the capacity guide’s correlative-lock query', () => {
  let stack: Stack;
  let a: SalesRefs;
  const waiters = async () => Number((await stack.query<{ count: string }>(capacityQuery('correlative-waiters')))[0]!.count);

  beforeAll(async () => {
    stack = await Stack.start({ services: ['gateway', 'inventory', 'sales'] });
    a = refsOf(await stack.seed(salesFixture()), 'a');
  });
  afterAll(() => stack?.stop());

  it('counts a sale waiting for its document type’s number, and none once it has it', async () => {
    expect(await waiters()).toBe(0);
    const lock = await stack.hold(`select 1 from sales.documentos where id = ${a.documentos.factura} for update`);
    let sale: Promise<{ status: number }> | undefined;
    try {
      sale = postSale(stack, SALES_KEY_A, saleBody(a, { detalles: [{ id_producto: a.productos.mouse, cantidad: 1 }] }));
      await eventually(async () => expect(await waiters()).toBe(1), 15_000);
    } finally {
      await lock.release();
    }
    expect((await sale!).status).toBe(201);
    expect(await waiters()).toBe(0);
  });
});
