import { randomBytes } from 'node:crypto';
import tls from 'node:tls';
import { performance } from 'node:perf_hooks';
import { webhookPath } from '@erp/contracts';
import { createLogger } from '@erp/runtime';
import { harness } from '@erp/testing';
import { webhookIngestMigrations, WEBHOOK_INGEST_SCHEMA } from '@erp/webhook-ingest';
import { claimPasses, insertConciliacion } from '../../services/webhook-ingest/src/db/conciliacion.repository';
import { insertIntegracion } from '../../services/webhook-ingest/src/db/integracion.repository';
import type { WebhookDb } from '../../services/webhook-ingest/src/db/tables';
import { credentialsContext, parseKeyring, sealSecrets, type ShopSecrets } from '../../services/webhook-ingest/src/domain/credentials';
import { hashToken } from '../../services/webhook-ingest/src/domain/token';
import { reconcileIntegracion } from '../../services/webhook-ingest/src/flows/reconcile.flow';
import { DEFAULT_CALL_POLICY, openShop } from '../../services/webhook-ingest/src/ports/shops';
import { startShops, testCa } from '../support/shops';
import { Stack } from '../support/stack';
import { webhookStore } from '../support/webhook-fixture';

/**
 * `npm run bench:shops`: one reconciliation pass over N orders per shop (10,000 unless
 * `--orders N`) against the shop simulator over HTTPS, on a database of its own: the first pass
 * finds every order missing (every webhook lost) and stores each as a delivery; the second finds
 * every one held and stores nothing. The baseline is the simulator's own page rate: the same
 * listing (and, for Shopify, the same reads of whole orders) through the same clients with
 * nothing stored. Shopify's bucket is the Standard plan's (2,000 points, 100 a second) unless
 * `--shopify-plan plus` (20,000 and 1,000). The deliveries' processing into sales is not part of
 * it: that is the webhook write path's benchmark.
 *
 * `--stock`: the stock push under `POST /sales` load instead: the whole stack in this process,
 * sales of one unit of one of 20 products at 50 a second for `--seconds` (30), both shops showing
 * the warehouse; prints the push lag (first change → the shop took it) at p50 and p99 and the
 * writes per stock change at each shop.
 */
async function main(): Promise<void> {
  if (process.argv.includes('--stock')) return stockBench();
  const arg = (name: string) => {
    const i = process.argv.indexOf(name);
    return i >= 0 ? process.argv[i + 1] : undefined;
  };
  const count = Number(arg('--orders') ?? 10_000);
  const plus = arg('--shopify-plan') === 'plus';
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), testCa().caPem]);

  const shops = await startShops({ shopify: { bucket: plus ? { maximumAvailable: 20_000, restoreRate: 1_000 } : undefined } });
  for (let i = 0; i < count; i++) {
    shops.woo.createOrder({
      lines: [
        { sku: 'MOU-01', quantity: 1 + (i % 3), price: '19.99' },
        { sku: 'KEY-02', quantity: 1, price: '45.50' },
      ],
    });
    shops.shopify.createOrder({
      lines: [
        { sku: 'MOU-01', quantity: 1 + (i % 3), price: '19.99' },
        { sku: 'KEY-02', quantity: 1, price: '45.50' },
      ],
    });
  }
  const h = await harness<WebhookDb>('benchshops', { schema: WEBHOOK_INGEST_SCHEMA, migrations: webhookIngestMigrations, poolMax: 4 });
  const keyring = parseKeyring(`b:${randomBytes(32).toString('base64')}`);
  const logger = createLogger('bench-shops', 'warn');
  const policy = { ...DEFAULT_CALL_POLICY };
  const results: string[] = [];
  try {
    for (const [plataforma, url, secrets] of [
      ['woocommerce', shops.woo.url, { clave: shops.woo.consumerKey, secreto: shops.woo.consumerSecret }],
      ['shopify', shops.shopify.url, { token: shops.shopify.accessToken }],
    ] as const) {
      const ruta = webhookPath(plataforma, randomBytes(16).toString('hex'));
      const sealedSecrets: ShopSecrets = { ...secrets, ruta };
      const id = await insertIntegracion(h.db, {
        empresa_id: 1,
        plataforma,
        usuario_id: 1,
        sucursal_id: 1,
        bodega_id: 1,
        documento_id: 1,
        canal_id: null,
        producto_envio_id: null,
        token_hash: hashToken(ruta),
        token_prefix: ruta.slice(-8),
        secreto: null,
        tienda_url: url,
        tienda_credenciales: sealSecrets(keyring, sealedSecrets, credentialsContext(1, plataforma)),
        tienda_ubicacion: null,
      });
      await insertConciliacion(h.db, id, 1);
      await h.db
        .updateTable('integraciones')
        .set({ created_at: new Date(Date.now() - 86_400_000) })
        .where('id', '=', id)
        .execute();

      // Baseline: the same reads through the same client, nothing stored.
      const shop = openShop(plataforma, url, sealedSecrets, policy);
      let t = performance.now();
      const listed = await shop.pedidosChangedSince(new Date(0), {
        wanted: async (s) => new Set(s.map((o) => o.referencia)),
        onPage: async () => undefined,
      });
      const baseline = (performance.now() - t) / 1000;

      const pass = async () => {
        const [claimed] = await claimPasses(h.db, 'bench', 600_000, { integracionId: id });
        const start = performance.now();
        const r = await reconcileIntegracion(
          {
            db: h.db,
            keyring,
            policy,
            webhookBaseUrl: undefined,
            overlapMs: 0,
            intervalMs: 3_600_000,
            leaseMs: 600_000,
            owner: 'bench',
            onStored: () => undefined,
            logger,
          },
          { ...claimed!, marca: null },
        );
        return { r, seconds: (performance.now() - start) / 1000 };
      };
      const first = await pass();
      const second = await pass();
      const rate = (n: number, s: number) => `${Math.round(n / s)}/s`;
      results.push(
        `| ${plataforma}${plataforma === 'shopify' ? (plus ? ' (Plus bucket)' : ' (Standard bucket)') : ''} | ${count} | ` +
          `${baseline.toFixed(1)} s (${rate(listed, baseline)}) | ${first.seconds.toFixed(1)} s (${rate(first.r.pedidos_leidos, first.seconds)}), ${first.r.pedidos_entregados} stored | ` +
          `${second.seconds.toFixed(1)} s (${rate(second.r.pedidos_leidos, second.seconds)}), ${second.r.pedidos_entregados} stored |`,
      );
      if (first.r.resultado !== 'correcta' || first.r.pedidos_entregados !== count)
        throw new Error(`first pass: ${JSON.stringify(first.r)}`);
      t = performance.now();
    }
  } finally {
    await h.close();
    await shops.close();
  }
  console.log("| shop | orders | baseline: the shop's pages alone | first pass (all missing) | second pass (all held) |");
  console.log('|---|---:|---:|---:|---:|');
  for (const line of results) console.log(line);
}

async function stockBench(): Promise<void> {
  const seconds = Number(process.argv[process.argv.indexOf('--seconds') + 1] ?? 30) || 30;
  const rate = 50;
  const PRODUCTS = 20;
  tls.setDefaultCACertificates([...tls.getCACertificates('default'), testCa().caPem]);
  const shops = await startShops();
  const skus = Array.from({ length: PRODUCTS }, (_, i) => `BENCH-${String(i).padStart(2, '0')}`);
  for (const sku of skus) {
    shops.woo.addProduct({ sku, stock: 0 });
    shops.shopify.addVariant({ sku, stock: 0 });
  }
  const keys = `b:${randomBytes(32).toString('base64')}`;
  const stack = await Stack.start({
    services: ['gateway', 'inventory', 'sales', 'webhook-ingest'],
    contract: false,
    gateway: { RATE_LIMIT_STANDARD: '1000000' },
    webhookIngest: (s) => ({
      PLATFORM_CREDENTIALS_KEYS: keys,
      PLATFORM_WEBHOOK_BASE_URL: s.baseUrl,
      PLATFORM_RECONCILE_INTERVAL_MS: 3_600_000,
    }),
  });
  const key = `bench_key_stock_${randomBytes(8).toString('hex')}`;
  try {
    const seeded = await stack.seed(
      webhookStore({
        nombre: 'Bench Stock',
        key,
        vender_sin_stock: true,
        productos: skus.map((codigo, i) => ({
          ref: `p${i}`,
          nombre: codigo,
          codigo,
          tipo: 'Producto',
          precio: 10,
          enable: 1,
          inventarios: [{ bodega: 'principal', stock: 100_000 }],
        })),
        integraciones: [
          {
            ref: 'woo',
            plataforma: 'woocommerce',
            tienda: { url: shops.woo.url, clave: shops.woo.consumerKey, secreto: shops.woo.consumerSecret },
          },
          { ref: 'shop', plataforma: 'shopify', tienda: { url: shops.shopify.url, token: shops.shopify.accessToken } },
        ],
      }),
    );
    const e = seeded.empresas.tienda!;
    const map = (k: string) => e[k] as Record<string, number>;
    const productos = skus.map((_, i) => map('productos')[`p${i}`]!);
    const body = (producto: number) =>
      JSON.stringify({
        fecha: '2026-11-27',
        estado: 'Completada',
        id_sucursal: map('sucursales').centro,
        id_bodega: map('bodegas').principal,
        id_documento: map('documentos').ticket,
        id_canal: map('canales').web,
        detalles: [{ id_producto: producto, cantidad: 1 }],
      });
    const before = { woo: shops.woo.stockWrites.length, shopify: shops.shopify.stockWrites.length };
    let sent = 0;
    let failed = 0;
    const inflight: Array<Promise<void>> = [];
    const start = performance.now();
    for (let n = 0; n < seconds * rate; n++) {
      const due = start + (n * 1000) / rate;
      const wait = due - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
      inflight.push(
        stack
          .api('/api/external/v1/sales', {
            key,
            method: 'POST',
            headers: { 'Content-Type': 'application/json' },
            body: body(productos[n % PRODUCTS]!),
          })
          .then((res) => void (res.status === 201 ? sent++ : failed++)),
      );
    }
    await Promise.all(inflight);
    const loadSeconds = (performance.now() - start) / 1000;
    // At rest: every shop shows our stock (100,000 less what was sold of each product).
    const expected = async () =>
      new Map(
        (
          await stack.query<{ codigo: string; stock: string }>(
            `select p.codigo, i.stock::text from inventory.inventarios i join inventory.productos p on p.id = i.producto_id where p.empresa_id = $1`,
            [e.id],
          )
        ).map((r) => [r.codigo, Math.floor(Number(r.stock))]),
      );
    const deadline = Date.now() + 60_000;
    for (;;) {
      const want = await expected();
      if (skus.every((sku) => shops.woo.stockOf(sku) === want.get(sku) && shops.shopify.stockOf(sku) === want.get(sku))) break;
      if (Date.now() > deadline) throw new Error('the shops did not reach our stock within a minute of the load');
      await new Promise((r) => setTimeout(r, 200));
    }
    const [lag] = await stack.query<{ p50: number; p99: number; pushes: number; max: number }>(
      `select percentile_cont(0.5) within group (order by lag_ms) as p50, percentile_cont(0.99) within group (order by lag_ms) as p99,
        max(lag_ms) as max, count(*)::int as pushes from webhook_ingest.stock_envios`,
    );
    const writes = {
      woo: shops.woo.stockWrites.slice(before.woo).filter((w) => w.applied).length,
      shopify: shops.shopify.stockWrites.slice(before.shopify).filter((w) => w.applied).length,
    };
    console.log(
      `${sent} sales in ${loadSeconds.toFixed(1)} s (${(sent / loadSeconds).toFixed(1)}/s, ${failed} refused), ${PRODUCTS} products, PLATFORM_STOCK_PUSH_DELAY_MS 2000`,
    );
    console.log('| measure | value |');
    console.log('|---|---:|');
    console.log(`| push lag p50 (first change → shop took it) | ${(lag!.p50 / 1000).toFixed(2)} s |`);
    console.log(`| push lag p99 | ${(lag!.p99 / 1000).toFixed(2)} s (max ${(lag!.max / 1000).toFixed(2)} s, ${lag!.pushes} pushes) |`);
    console.log(`| writes per stock change, WooCommerce | ${(writes.woo / sent).toFixed(3)} (${writes.woo} writes) |`);
    console.log(`| writes per stock change, Shopify | ${(writes.shopify / sent).toFixed(3)} (${writes.shopify} writes) |`);
  } finally {
    await stack.stop();
    await shops.close();
  }
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
