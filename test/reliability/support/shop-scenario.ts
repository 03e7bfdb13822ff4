import { randomBytes } from 'node:crypto';
import { SchemaClients, seedFixture, type WebhookToken } from '@erp/back-office';
import { webhookSubjects } from '@erp/contracts';
import { startShops } from '../../support/shops';
import { FaultLog, type FaultRecord } from './faults';
import { checkShops, subscriptionProblems, type PassSeen, type ShopRestInput } from './shop-invariants';
import { SHOP_PRODUCTS, SHOP_STOCK, ShopTraffic, type ShopPlatform } from './shop-traffic';
import { finish, newLoad, replaceCrashed, type ChaosContext, type ScenarioResult } from './scenarios';
import { sleep, waitFor } from './wait';

export interface ShopsOptions {
  seed: number;
  /** PLATFORM_RECONCILE_INTERVAL_MS of webhook-ingest for the phase; the shops must agree with us within two of them at rest. */
  reconcileIntervalMs: number;
  /** How long webhook-ingest stays down in the middle of the load. */
  downMs: number;
  /** Beyond two intervals at rest, for what the last pass stored to become sales and returns. */
  processingMs: number;
  /** Fraction of each shop's webhooks never sent. */
  drop: number;
}

const SHOPS_KEY = 'test_key_reliability_t_0123456789abcdef';

/** A company selling online through one shop of each platform, both with their API (`tienda`) for reconciliation. */
function shopCompany(shops: Awaited<ReturnType<typeof startShops>>): unknown {
  return {
    empresas: [
      {
        ref: 't',
        nombre: 'Tiendas en Línea S.A.',
        vender_sin_stock: true,
        usuarios: [{ ref: 'admin', nombre: 'Admin Tiendas', rol: 'Administrador' }],
        api_keys: [{ ref: 'main', usuario: 'admin', key: SHOPS_KEY }],
        sucursales: [{ ref: 'centro', nombre: 'Sucursal Centro', bodegas: [{ ref: 'principal', nombre: 'Bodega Principal' }] }],
        documentos: [{ ref: 'web', nombre: 'Pedido web', sucursal: 'centro', prefijo: 'WEB-', correlativo: 1, activo: true }],
        canales: [{ ref: 'web', nombre: 'Tienda en línea' }],
        productos: SHOP_PRODUCTS.map((p) => ({
          ref: p.ref,
          nombre: p.nombre,
          codigo: p.codigo,
          tipo: 'Producto',
          precio: Number(p.precio),
          enable: 1,
          inventarios: [{ bodega: 'principal', stock: SHOP_STOCK }],
        })),
        integraciones: [
          {
            ref: 'woo',
            plataforma: 'woocommerce',
            secreto: `wc_secret_${randomBytes(6).toString('hex')}`,
            tienda: { url: shops.woo.url, clave: shops.woo.consumerKey, secreto: shops.woo.consumerSecret },
          },
          {
            ref: 'shop',
            plataforma: 'shopify',
            secreto: shops.shopify.apiSecret,
            tienda: { url: shops.shopify.url, token: shops.shopify.accessToken },
          },
        ].map((i) => ({ ...i, usuario: 'admin', sucursal: 'centro', bodega: 'principal', documento: 'web', canal: 'web' })),
      },
    ],
  };
}

/**
 * A partner of the shops' own company selling the same products through the API while the shops
 * sell them: one to three units of one product about every 700 ms (a sale refused while the system
 * is under faults is counted, not retried).
 */
function partnerSalesOf(gateway: string, seeded: Record<string, unknown>, seed: number) {
  const map = (k: string) => seeded[k] as Record<string, number>;
  let stopped = false;
  let made = 0;
  let refused = 0;
  let n = seed;
  const loop = (async () => {
    while (!stopped) {
      n = (n * 1103515245 + 12345) % 2 ** 31;
      const producto = map('productos')[SHOP_PRODUCTS[n % SHOP_PRODUCTS.length]!.ref]!;
      const res = await fetch(`${gateway}/api/external/v1/sales`, {
        method: 'POST',
        headers: { Authorization: `Bearer ${SHOPS_KEY}`, 'Content-Type': 'application/json' },
        body: JSON.stringify({
          fecha: new Date().toISOString().slice(0, 10),
          estado: 'Completada',
          id_sucursal: map('sucursales').centro,
          id_bodega: map('bodegas').principal,
          id_documento: map('documentos').web,
          id_canal: map('canales').web,
          detalles: [{ id_producto: producto, cantidad: 1 + (n % 3) }],
        }),
      }).catch(() => undefined);
      if (res?.status === 201) made++;
      else refused++;
      await res?.body?.cancel();
      await sleep(700);
    }
  })();
  return {
    get made() {
      return made;
    },
    get refused() {
      return refused;
    },
    stop: async () => {
      stopped = true;
      await loop;
    },
  };
}

/**
 * Records each reconciliation pass of the shops' integrations as it finishes (the row of
 * `webhook_ingest.conciliaciones` read every second): its time, outcome and error.
 */
class PassWatch {
  readonly passes: PassSeen[] = [];
  private running = false;
  private loop: Promise<void> = Promise.resolve();

  constructor(
    private readonly ctx: ChaosContext,
    private readonly empresaId: number,
    private readonly platformOf: Map<number, ShopPlatform>,
  ) {}

  start(): void {
    this.running = true;
    this.loop = (async () => {
      const clients = await SchemaClients.connect(this.ctx.databases);
      const last = new Map<number, number>();
      try {
        while (this.running) {
          const rows = await clients
            .q(
              `select integracion_id, ultima_at, resultado, error from webhook_ingest.conciliaciones where empresa_id = $1 and ultima_at is not null`,
              [this.empresaId],
            )
            .catch(() => []);
          for (const r of rows) {
            const at = (r.ultima_at as Date).getTime();
            if (last.get(r.integracion_id) === at) continue;
            last.set(r.integracion_id, at);
            this.passes.push({ platform: this.platformOf.get(r.integracion_id)!, at: r.ultima_at, resultado: r.resultado, error: r.error });
          }
          await sleep(1_000);
        }
      } finally {
        await clients.end();
      }
    })();
  }

  async stop(): Promise<void> {
    this.running = false;
    await this.loop;
  }
}

/**
 * Two shops, one of each platform, take orders, refunds and cancellations while a fifth of their
 * webhooks are dropped, one of our subscriptions is disabled at WooCommerce and another deleted at
 * Shopify, and webhook-ingest is down for `downMs` (the shops meanwhile fail their deliveries:
 * WooCommerce disables a webhook after its failures, Shopify deletes a subscription made through
 * the API); partners write through the gateway all along. At rest, within two reconciliation
 * intervals and the processing after them, the shops and our books must agree (SHOP_CHECKS);
 * then the books' invariants and the partners' events are checked as after every load phase.
 */
export async function shopsScenario(ctx: ChaosContext, options: ShopsOptions): Promise<ScenarioResult> {
  const faults = new FaultLog();
  const events: string[] = [];
  const problems: string[] = [];
  const step = (line: string, kind: FaultRecord['kind'] = 'note') => {
    events.push(line);
    faults.record(kind, line);
    ctx.log(`shops: ${line}`);
  };
  const shops = await startShops();
  try {
    ShopTraffic.stock(shops);
    const gateway = ctx.rotation.list()[0]!;
    ctx.cluster.configure('webhook-ingest', {
      PLATFORM_CREDENTIALS_KEYS: `chaos:${randomBytes(32).toString('base64')}`,
      PLATFORM_WEBHOOK_BASE_URL: gateway,
      PLATFORM_RECONCILE_INTERVAL_MS: String(options.reconcileIntervalMs),
    });
    for (const old of ctx.cluster.of('webhook-ingest')) {
      const { successor } = await ctx.cluster.replace(old);
      step(
        `${successor.label} in place of ${old.label}, with the credential keys, webhooks to ${gateway}, a pass every ${options.reconcileIntervalMs} ms`,
      );
    }
    const seeded = (await seedFixture(ctx.admin, shopCompany(shops))).empresas.t!;
    const integ = seeded.integraciones as Record<'woo' | 'shop', WebhookToken>;
    const webhookUrls: Record<ShopPlatform, string> = {
      woocommerce: `${gateway}${integ.woo.path}`,
      shopify: `${gateway}${integ.shop.path}`,
    };
    step(
      `WooCommerce at ${shops.woo.url}, Shopify at ${shops.shopify.url}; company ${seeded.id} seeded with both integrations and their APIs`,
    );
    // The first pass of each integration, due once it exists, makes our subscriptions.
    const subscribed = async () => subscriptionProblems(shops, webhookUrls).length === 0;
    await waitFor(subscribed, 3 * options.reconcileIntervalMs, 'our subscriptions at both shops after the first passes').catch(async () => {
      problems.push(`no subscriptions after the first passes: ${subscriptionProblems(shops, webhookUrls).join('; ')}`);
      await ctx.admin.request(webhookSubjects, 'webhooks.admin.reconcile', {}, { requestId: 'chaos-shops' }, { timeoutMs: 60_000 });
    });
    step(
      `our subscriptions at both shops (${shops.woo.webhooks.size} WooCommerce webhooks, ${shops.shopify.subscriptions.size} Shopify subscriptions)`,
    );

    const watch = new PassWatch(
      ctx,
      seeded.id,
      new Map([
        [integ.woo.id, 'woocommerce'],
        [integ.shop.id, 'shopify'],
      ]),
    );
    watch.start();
    shops.woo.setFaults({ drop: options.drop, seed: options.seed });
    shops.shopify.setFaults({ drop: options.drop, seed: options.seed + 1 });
    const traffic = new ShopTraffic(shops, { seed: options.seed, everyMs: 1_000 });
    // Partners write meanwhile; the platforms' orders come from the shops here, not from the load.
    const load = newLoad(ctx, 'shops', 3, options.seed, { mix: { 'woo-order': 0, 'woo-product': 0, 'shop-order': 0 }, thinkMs: 100 });
    step(
      `seed ${options.seed}: each shop changes an order about every second, ${options.drop * 100} % of their webhooks dropped; 3 partners write`,
    );
    traffic.start();
    load.start();
    const partnerSales = partnerSalesOf(gateway, seeded, options.seed);
    await sleep(20_000);

    const hook = [...shops.woo.webhooks.values()].find((w) => w.delivery_url === webhookUrls.woocommerce && w.topic === 'order.updated');
    if (hook) hook.status = 'disabled';
    const sub = [...shops.shopify.subscriptions.values()].find((s) => s.uri === webhookUrls.shopify && s.topic === 'ORDERS_CREATE');
    if (sub) shops.shopify.subscriptions.delete(sub.id);
    step(`WooCommerce webhook ${hook?.id} (order.updated) disabled, Shopify subscription ${sub?.id} (ORDERS_CREATE) deleted`, 'fault');
    await sleep(15_000);

    const replicas = ctx.cluster.of('webhook-ingest');
    const down = `SIGTERM to ${replicas.map((r) => r.label).join(' and ')}: webhook-ingest down for ${options.downMs} ms`;
    events.push(down);
    ctx.log(`shops: ${down}`);
    const stopped = faults.record('fault', down);
    const exits = await Promise.all(replicas.map((r) => ctx.cluster.signal(r, 'SIGTERM')));
    step(`  exited ${exits.map((e) => e.code ?? e.signal).join(', ')}`);
    await sleep(options.downMs);
    for (let i = 0; i < replicas.length; i++) {
      const successor = await ctx.cluster.startRetrying('webhook-ingest', {
        onFailedStart: (label, reason) => step(`${label} exited while starting (${reason.slice(0, 160)}); started again in 2 s`, 'fault'),
      });
      step(`${successor.label} started`, 'recovery');
    }
    stopped();
    await sleep(30_000);
    await Promise.all([traffic.stop(), load.stop(), partnerSales.stop()]);
    step(`a partner of the shops' company sold ${partnerSales.made} times the same products meanwhile (${partnerSales.refused} refused)`);
    await replaceCrashed(ctx, problems, (line) => step(line, 'fault'), 'during the shops phase');

    const { orders, refunds, cancellations } = traffic.counts;
    step(`load stopped: ${orders} orders, ${refunds} refunds, ${cancellations} cancellations at the shops`);
    const restAt = Date.now();
    await Promise.all([shops.woo.settled(), shops.shopify.settled()]);
    const input: ShopRestInput = {
      databases: ctx.databases,
      empresaId: seeded.id,
      shops,
      orders: traffic.orders,
      webhookUrls,
      passes: watch.passes,
      drift: () =>
        ctx.admin.request(
          webhookSubjects,
          'webhooks.admin.drift',
          { reparar: false, dias: 1 },
          { requestId: 'chaos-shops-drift' },
          { timeoutMs: 60_000 },
        ),
    };
    const budgetMs = 2 * options.reconcileIntervalMs + options.processingMs;
    // When each check began to hold (and kept holding) after the load stopped.
    const heldSince = new Map<string, number>();
    const look = async () => {
      const now = await checkShops(input);
      for (const r of now) {
        if (r.violations.length > 0) heldSince.delete(r.name);
        else if (!heldSince.has(r.name)) heldSince.set(r.name, Date.now() - restAt);
      }
      return now;
    };
    let results = await look();
    while (results.some((r) => r.violations.length > 0) && Date.now() - restAt < budgetMs) {
      await sleep(2_000);
      results = await look();
    }
    const heldMs = results.every((r) => r.violations.length === 0) ? Date.now() - restAt : undefined;
    step(
      heldMs !== undefined
        ? `every shop check held ${(heldMs / 1000).toFixed(0)} s after the load stopped`
        : `shop checks still broken ${(budgetMs / 1000).toFixed(0)} s after the load stopped`,
    );
    await watch.stop();

    const figures = await shopFigures(ctx, seeded.id, shops, traffic, watch.passes, integ, options);
    figures['at rest until every shop check held (s; budget: two intervals and the processing)'] =
      `${heldMs === undefined ? 'never' : (heldMs / 1000).toFixed(0)} (${(budgetMs / 1000).toFixed(0)})`;
    figures['at rest until each shop check held (s)'] = results
      .map(
        (r) => `${heldSince.has(r.name) ? (heldSince.get(r.name)! / 1000).toFixed(0) : 'never'} (${r.name.split(':')[0]!.split(',')[0]})`,
      )
      .join('; ');
    const result = await finish(ctx, 'shops', load, events, problems, figures);
    result.invariants.unshift(...results);
    return { ...result, seed: options.seed, faults: faults.entries, ledger: load.ledger };
  } finally {
    await shops.close();
  }
}

/** What the phase measured: the shops' side (webhooks dropped and failed, API calls, throttling) and ours (passes, misses). */
async function shopFigures(
  ctx: ChaosContext,
  empresaId: number,
  shops: ShopRestInput['shops'],
  traffic: ShopTraffic,
  passes: PassSeen[],
  integ: Record<'woo' | 'shop', WebhookToken>,
  options: ShopsOptions,
): Promise<Record<string, string | number>> {
  const clients = await SchemaClients.connect(ctx.databases);
  try {
    const byOrigin = await clients.q(
      `select integracion_id, origen, count(*)::int as n, count(*) filter (where cancelado and id_venta is null)::int as unsold
       from webhook_ingest.pedidos where empresa_id = $1 group by 1, 2`,
      [empresaId],
    );
    const state = await clients.q(
      `select integracion_id, suscripcion, restauraciones, resultado from webhook_ingest.conciliaciones where empresa_id = $1`,
      [empresaId],
    );
    const figures: Record<string, string | number> = {};
    for (const [platform, shop, id] of [
      ['woocommerce', shops.woo, integ.woo.id],
      ['shopify', shops.shopify, integ.shop.id],
    ] as const) {
      const mine = traffic.orders.filter((o) => o.platform === platform);
      const attempts = shop.deliveries;
      const ok = attempts.filter((a) => a.status !== null && a.status >= 200 && a.status < 300).length;
      const n = (origen: string) => byOrigin.find((r) => r.integracion_id === id && r.origen === origen)?.n ?? 0;
      const recovered = n('conciliacion');
      const mined = passes.filter((p) => p.platform === platform);
      const row = state.find((r) => r.integracion_id === id);
      figures[`${platform}: orders, refunds (most on one order), cancellations`] =
        `${mine.length}, ${mine.reduce((s, o) => s + o.refunds.length, 0)} (${Math.max(0, ...mine.map((o) => o.refunds.length))}), ${mine.filter((o) => o.cancelled).length}`;
      figures[`${platform}: webhooks dropped by the faults; delivery attempts 2xx / refused / no answer`] =
        `${shop.dropped.length}; ${ok} / ${attempts.filter((a) => a.status !== null && (a.status < 200 || a.status >= 300)).length} / ${attempts.filter((a) => a.status === null).length}`;
      figures[`${platform}: orders first brought by a webhook / by reconciliation (the webhooks missed)`] =
        `${n('webhook')} / ${recovered} (${mine.length > 0 ? ((100 * recovered) / mine.length).toFixed(1) : '0'} % of ${mine.length})`;
      figures[`${platform}: cancelled orders first seen cancelled (no sale made)`] = byOrigin
        .filter((r) => r.integracion_id === id)
        .reduce((sum, r) => sum + Number(r.unsold), 0);
      figures[`${platform}: passes seen correcta / fallida; subscription now, restorations`] =
        `${mined.filter((p) => p.resultado === 'correcta').length} / ${mined.filter((p) => p.resultado === 'fallida').length}; ${row?.suscripcion}, ${row?.restauraciones}`;
      const failed = mined.filter((p) => p.resultado === 'fallida');
      if (failed.length > 0)
        figures[`${platform}: failed passes`] = failed.map((p) => `${p.at.toISOString().slice(11, 19)} ${p.error}`).join(' | ');
      figures[`${platform}: API requests, throttled answers (THROTTLED or 429), by route`] =
        `${shop.metrics.requests}, ${shop.metrics.throttled}, ${JSON.stringify(shop.metrics.byRoute)}`;
    }
    figures['reconciliation interval, webhook-ingest down (ms)'] = `${options.reconcileIntervalMs}, ${options.downMs}`;
    return figures;
  } finally {
    await clients.end();
  }
}
