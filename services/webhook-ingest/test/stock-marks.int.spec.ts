import { harness, type Harness } from '@erp/testing';
import { webhookIngestMigrations, WEBHOOK_INGEST_SCHEMA } from '../src';
import { markStockChanged } from '../src/db/stock.repository';
import type { WebhookDb } from '../src/db/tables';

describe('stock changes of several companies marked in one statement', () => {
  let h: Harness<WebhookDb>;
  let shops: Record<'a' | 'b' | 'sinStock' | 'otraBodega', number>;

  beforeAll(async () => {
    h = await harness<WebhookDb>('stockmarks', { schema: WEBHOOK_INGEST_SCHEMA, migrations: webhookIngestMigrations });
    const integracion = async (empresaId: number, bodegaId: number, sincronizar: boolean) => {
      const row = await h.db
        .insertInto('integraciones')
        .values({
          empresa_id: empresaId,
          plataforma: 'woocommerce',
          usuario_id: 1,
          sucursal_id: 1,
          bodega_id: bodegaId,
          documento_id: null,
          canal_id: null,
          producto_envio_id: null,
          token_hash: Buffer.from(`token-${empresaId}-${bodegaId}-${String(sincronizar)}`),
          token_prefix: 'tok',
          secreto: null,
          tienda_url: 'https://shop.test',
          tienda_credenciales: null,
          tienda_ubicacion: null,
          sincronizar_stock: sincronizar,
        })
        .returning('id')
        .executeTakeFirstOrThrow();
      return row.id;
    };
    shops = {
      a: await integracion(1, 10, true),
      b: await integracion(2, 20, true),
      sinStock: await integracion(3, 30, false),
      otraBodega: await integracion(1, 11, true),
    };
  });

  afterAll(() => h?.close());

  const marks = () =>
    h.db
      .selectFrom('stock_push')
      .select(['integracion_id', 'producto_id', 'codigo', 'cambios'])
      .orderBy('integracion_id')
      .orderBy('producto_id')
      .execute();

  it('marks each company’s products for its own shops only, one change per event, whatever the events beside it', async () => {
    const marked = await markStockChanged(h.db, [
      // One event moves product 100 twice in warehouse 10: one change.
      {
        empresaId: 1,
        moves: [
          { id_producto: 100, codigo: 'P-100', id_bodega: 10 },
          { id_producto: 100, codigo: 'P-100', id_bodega: 10 },
          { id_producto: 101, codigo: 'P-101', id_bodega: 10 },
        ],
      },
      { empresaId: 1, moves: [{ id_producto: 100, codigo: 'P-100', id_bodega: 10 }] },
      // Company 2's warehouse 10 is no shop's: only its warehouse 20 is.
      {
        empresaId: 2,
        moves: [
          { id_producto: 100, codigo: 'Q-100', id_bodega: 20 },
          { id_producto: 102, codigo: 'Q-102', id_bodega: 10 },
        ],
      },
      // Company 3's shop does not show stock.
      { empresaId: 3, moves: [{ id_producto: 100, codigo: 'R-100', id_bodega: 30 }] },
    ]);

    expect(marked).toBe(3);
    expect(await marks()).toEqual([
      { integracion_id: shops.a, producto_id: 100, codigo: 'P-100', cambios: 2 },
      { integracion_id: shops.a, producto_id: 101, codigo: 'P-101', cambios: 1 },
      { integracion_id: shops.b, producto_id: 100, codigo: 'Q-100', cambios: 1 },
    ]);

    // A later batch counts on top of what is owed, in the warehouse each shop shows.
    await markStockChanged(h.db, [{ empresaId: 1, moves: [{ id_producto: 100, codigo: 'P-100', id_bodega: 11 }] }]);
    await markStockChanged(h.db, [{ empresaId: 1, moves: [{ id_producto: 100, codigo: 'P-100', id_bodega: 10 }] }]);
    expect(await marks()).toEqual([
      { integracion_id: shops.a, producto_id: 100, codigo: 'P-100', cambios: 3 },
      { integracion_id: shops.a, producto_id: 101, codigo: 'P-101', cambios: 1 },
      { integracion_id: shops.b, producto_id: 100, codigo: 'Q-100', cambios: 1 },
      { integracion_id: shops.otraBodega, producto_id: 100, codigo: 'P-100', cambios: 1 },
    ]);
  });
});
