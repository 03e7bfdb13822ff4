import { createLogger } from '@erp/runtime';
import { eventually, harness, type Harness } from '@erp/testing';
import { webhookIngestMigrations, WEBHOOK_INGEST_SCHEMA, type ProcessingDeps } from '../src';
import type { WebhookDb } from '../src/db/tables';
import { DeliveryGrouper } from '../src/workers/delivery-grouper.worker';
import { IntakePace } from '../src/workers/intake-pace.worker';
import { published, wooHeaders } from './platform.factories';

describe('deliveries of an order whose group is under way', () => {
  let h: Harness<WebhookDb>;
  let integracionId: number;

  beforeAll(async () => {
    h = await harness<WebhookDb>('grouper', { schema: WEBHOOK_INGEST_SCHEMA, migrations: webhookIngestMigrations });
    const row = await h.db
      .insertInto('integraciones')
      .values({
        empresa_id: 7,
        plataforma: 'woocommerce',
        usuario_id: 11,
        sucursal_id: 1,
        bodega_id: 2,
        documento_id: 3,
        canal_id: null,
        producto_envio_id: null,
        token_hash: Buffer.from('token-grouper'),
        token_prefix: 'tok',
        secreto: null,
        tienda_url: null,
        tienda_credenciales: null,
        tienda_ubicacion: null,
        sincronizar_stock: false,
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    integracionId = row.id;
  });

  afterAll(() => h?.close());

  /** A delivery as the receive step stores it: WooCommerce's published order 727 under another id and status. */
  const stored = async (order: number, status: string, modified: string) => {
    const body = published('woocommerce/order-727.json', [
      ['"id": 727,', `"id": ${order},`],
      ['"status": "processing"', `"status": "${status}"`],
      ['"date_modified_gmt": "2017-03-22T19:28:08"', `"date_modified_gmt": "${modified}"`],
    ]);
    const headers = Object.fromEntries(Object.entries(wooHeaders(body, 'order.updated', 'secret')).map(([k, v]) => [k.toLowerCase(), v]));
    const row = await h.db
      .insertInto('entregas')
      .values({
        integracion_id: integracionId,
        empresa_id: 7,
        plataforma: 'woocommerce',
        recurso: 'pedido',
        tema: 'order.updated',
        clave_dedup: `pedido:${order}:${modified}`,
        referencia: `woo-${order}`,
        headers: JSON.stringify(headers),
        cuerpo: Buffer.from(body),
      })
      .returning('id')
      .executeTakeFirstOrThrow();
    return row.id;
  };

  /** A grouper whose group reaches the services only through the context: held until released, then failed. */
  const grouper = () => {
    let contexts = 0;
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const deps = {
      context: async () => {
        contexts++;
        await held;
        throw new Error('context unavailable');
      },
    } as unknown as ProcessingDeps;
    const pace = new IntakePace({ concurrency: 4, concurrencyDuringIntake: 4, busyPerSecond: 1_000 });
    const g = new DeliveryGrouper(h.db, deps, { maxGroup: 10, windowMs: 0, maxInFlight: 2, pace }, createLogger('grouper-test', 'silent'));
    /** What happened, in order: each delivery processed alone (start and end), and each answer. */
    const log: string[] = [];
    const submit = (name: string, id: number) =>
      g
        .submit(id, 1, async () => {
          log.push(`alone ${name}`);
          await new Promise((resolve) => setTimeout(resolve, 50));
          log.push(`alone ${name} over`);
          return 'procesada';
        })
        .then((outcome) => {
          log.push(`answered ${name}`);
          return outcome;
        });
    return { submit, log, release, contexts: () => contexts };
  };
  const notYet = async (p: Promise<unknown>) => {
    const pending = Symbol('pending');
    await new Promise((resolve) => setTimeout(resolve, 200));
    await expect(Promise.race([p, Promise.resolve(pending)])).resolves.toBe(pending);
  };

  it('waits for that group to be over, even when it arrives in a later batch; another order does not wait', async () => {
    const { submit, log, release, contexts } = grouper();
    const [a, b] = [await stored(9601, 'processing', '2026-03-12T16:00:00'), await stored(9602, 'processing', '2026-03-12T16:00:00')];
    const group = Promise.all([submit('a', a), submit('b', b)]);
    let cancelled: Promise<unknown> | undefined;
    try {
      await eventually(async () => expect(contexts()).toBe(1));
      // A later version of order 9601, and a first delivery of another order, while the group is held.
      cancelled = submit('a cancelled', await stored(9601, 'cancelled', '2026-03-12T17:00:00'));
      const other = submit('c', await stored(9603, 'processing', '2026-03-12T16:00:00'));
      // The other order is processed alone at once; the later version waits.
      await expect(other).resolves.toBe('procesada');
      await notYet(cancelled);
      expect(log).toEqual(['alone c', 'alone c over', 'answered c']);
    } finally {
      release();
    }
    // The group failed: its deliveries are each processed alone, and the later version after its order's.
    await expect(group).resolves.toEqual(['procesada', 'procesada']);
    await expect(cancelled).resolves.toBe('procesada');
    expect(log.slice(3).filter((e) => !e.includes('b'))).toEqual([
      'alone a',
      'alone a over',
      'answered a',
      'alone a cancelled',
      'alone a cancelled over',
      'answered a cancelled',
    ]);
  });

  it('processes an order’s later delivery, taken in another batch, after its first one processed alone is over', async () => {
    const { submit, log, release } = grouper();
    release();
    const first = submit('d', await stored(9604, 'processing', '2026-03-12T16:00:00'));
    const later = submit('d cancelled', await stored(9604, 'cancelled', '2026-03-12T17:00:00'));
    await expect(Promise.all([first, later])).resolves.toEqual(['procesada', 'procesada']);
    expect(log).toEqual(['alone d', 'alone d over', 'answered d', 'alone d cancelled', 'alone d cancelled over', 'answered d cancelled']);
  });
});
