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
import { reconcileIntegration } from '../../services/webhook-ingest/src/flows/reconcile.flow';
import { DEFAULT_CALL_POLICY, openShop } from '../../services/webhook-ingest/src/ports/shops';
import { startShops, testCa } from '../support/shops';

/**
 * `npm run bench:shops`: one reconciliation pass over N orders per shop (10,000 unless
 * `--orders N`) against the shop simulator over HTTPS, on a database of its own: the first pass
 * finds every order missing (every webhook lost) and stores each as a delivery; the second finds
 * every one held and stores nothing. The baseline is the simulator's own page rate: the same
 * listing (and, for Shopify, the same reads of whole orders) through the same clients with
 * nothing stored. Shopify's bucket is the Standard plan's (2,000 points, 100 a second) unless
 * `--shopify-plan plus` (20,000 and 1,000). The deliveries' processing into sales is not part of
 * it: that is the webhook write path's benchmark.
 */
async function main(): Promise<void> {
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
      const listed = await shop.ordersChangedSince(new Date(0), {
        wanted: async (s) => new Set(s.map((o) => o.referencia)),
        onPage: async () => undefined,
      });
      const baseline = (performance.now() - t) / 1000;

      const pass = async () => {
        const [claimed] = await claimPasses(h.db, 'bench', 600_000, { integracionId: id });
        const start = performance.now();
        const r = await reconcileIntegration(
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

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
