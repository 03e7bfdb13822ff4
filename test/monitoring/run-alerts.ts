import { execFile, spawn, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import http from 'node:http';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { jetstreamManager } from '@nats-io/jetstream';
import pg from 'pg';
import { stringify } from 'yaml';
import type { WebhookToken } from '@erp/back-office';
import { streamName } from '@erp/contracts';
import { freePort } from '@erp/testing';
import type { IPrometheusRule } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1/PrometheusRule';
import { TestReceiver } from '../../services/subscriptions/test/receiver';
import { openToolbox } from '../chart/toolbox';
import { ofKind, parseObjects } from '../chart/kube-objects';
import { Stack } from '../support/stack';
import { deliver, webhookStore } from '../support/webhook-fixture';
import { wooHeaders, wooOrder } from '../../services/webhook-ingest/test/platform.factories';
import { PROMETHEUS, RUNBOOK_BASE_URL, alertRules, ruleGroups } from './monitoring';

/**
 * `npm run test:alerts`: the chart's alerts on a real Prometheus (Debian's `prometheus` binary, a
 * free loopback port, a temp directory) scraping every service of a local stack. The rules are
 * those of the rendered chart with short `for` and thresholds. First a healthy stack under traffic
 * must fire nothing; then each fault is induced and Prometheus' HTTP API must show its alert
 * firing: reads held behind a lock (latency), a partner receiver that fails (then its subscription disabled), a platform order that
 * cannot become a sale, Redis stopped (its own redis-server), sales stopped (5xx, platform
 * deliveries waiting, redeliveries), a planted audit violation, and the intake stream lost (the
 * outbox grows). The audit runs the real CLI; its exit status reaches Prometheus as the Job
 * metrics kube-state-metrics reports for the CronJob's Jobs. Exits 1 when an alert is missing or
 * one fires on the healthy stack.
 */
const NAMESPACE = 'erp-live';
const KEY = 'test_key_alerts_live_0123456789abcd';
const WOO_SECRET = 'wc_secret_alerts_live_1';
const FOR = '3s';
const FIRING_TIMEOUT_MS = 90_000;
const ROOT = path.resolve(__dirname, '..', '..');
const API = '/api/external/v1';

const started = Date.now();
const log = (line: string) => console.log(`[${((Date.now() - started) / 1000).toFixed(0).padStart(4)} s] ${line}`);
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** The alerts of the chart as the test runs them: every `for` short, the age thresholds in seconds. */
async function renderRules(): Promise<{ groups: ReturnType<typeof ruleGroups>; alerts: string[] }> {
  const toolbox = openToolbox();
  try {
    // Every alert's `for` short: the chart names its alerts, then renders them with the override.
    const render = async (forEach: Record<string, string>) => {
      const values = {
        image: { requireDigest: false },
        monitoring: {
          prometheusRule: {
            enabled: true,
            runbookBaseUrl: RUNBOOK_BASE_URL,
            for: forEach,
            thresholds: { webhookOldestPendingSeconds: 15, outboxOldestPendingSeconds: 15, consumerOldestPendingSeconds: 15 },
          },
          // Its alerts on the scrape targets name the jobs it gives them.
          serviceMonitor: { enabled: true },
          audit: { enabled: true },
        },
      };
      const args = ['template', 'erp', path.join(ROOT, 'charts', 'erp'), '--namespace', NAMESPACE];
      const objects = parseObjects(await toolbox.helm([...args, '--values', toolbox.writeFile('values.json', JSON.stringify(values))]));
      return ofKind<IPrometheusRule>(objects, 'PrometheusRule')[0]!;
    };
    const names = alertRules(await render({})).map((a) => a.alert!);
    const rule = await render(Object.fromEntries(names.map((a) => [a, FOR])));
    return { groups: ruleGroups(rule), alerts: names };
  } finally {
    toolbox.dispose();
  }
}

/** What kube-state-metrics reports of the audit CronJob's Jobs: here, of runs of the real CLI. */
class AuditJobs {
  private readonly jobs: Array<{ name: string; failed: boolean; at: number }> = [];
  private readonly server = http.createServer((_req, res) => {
    const lastSuccess = Math.max(0, ...this.jobs.filter((j) => !j.failed).map((j) => j.at));
    const lines = [
      ...this.jobs.map((j) => `kube_job_status_failed{namespace="${NAMESPACE}",job_name="${j.name}"} ${j.failed ? 1 : 0}`),
      ...(lastSuccess ? [`kube_cronjob_status_last_successful_time{namespace="${NAMESPACE}",cronjob="erp-audit"} ${lastSuccess}`] : []),
    ];
    res.setHeader('Content-Type', 'text/plain; version=0.0.4');
    res.end(`${lines.join('\n')}\n`);
  });
  port = 0;

  async start(): Promise<void> {
    this.port = await freePort();
    await new Promise<void>((resolve) => this.server.listen(this.port, '127.0.0.1', resolve));
  }

  /** Runs `admin audit` as the CronJob's container does; its exit status is the Job's. */
  async run(databaseUrl: string): Promise<{ failed: boolean; output: string }> {
    const at = Math.floor(Date.now() / 1000);
    let failed = false;
    let output: string;
    try {
      output = (
        await promisify(execFile)(process.execPath, ['--conditions=development', '--import', 'tsx', 'services/admin/src/cli.ts', 'audit'], {
          cwd: ROOT,
          env: { ...process.env, DATABASE_URL: databaseUrl, LOG_LEVEL: 'silent' },
        })
      ).stdout;
    } catch (err) {
      const failure = err as { code?: number; stdout?: string };
      failed = failure.code === 1;
      output = failure.stdout ?? '';
      if (!failed) throw err;
    }
    this.jobs.push({ name: `erp-audit-${at}`, failed, at });
    return { failed, output };
  }

  async stop(): Promise<void> {
    await new Promise<void>((resolve) => this.server.close(() => resolve()));
  }
}

interface Alert {
  labels: Record<string, string>;
  state: 'pending' | 'firing';
}

class Prometheus {
  private process: ChildProcess | undefined;
  url = '';

  async start(dir: string, targets: Array<{ name: string; port: number }>, auditPort: number, groups: unknown[]): Promise<void> {
    fs.writeFileSync(path.join(dir, 'rules.yaml'), stringify({ groups }));
    const config = {
      global: { scrape_interval: '1s', evaluation_interval: '1s', scrape_timeout: '900ms' },
      rule_files: ['rules.yaml'],
      scrape_configs: [
        // What the chart's ServiceMonitor gives: a job per Service (erp-<service>), the namespace and pod of
        // each target, the metrics' own `service` label kept.
        ...targets.map((t) => ({
          job_name: `erp-${t.name}`,
          honor_labels: true,
          static_configs: [{ targets: [`127.0.0.1:${t.port}`], labels: { namespace: NAMESPACE, pod: `${t.name}-0` } }],
        })),
        { job_name: 'kube-state-metrics', honor_labels: true, static_configs: [{ targets: [`127.0.0.1:${auditPort}`] }] },
      ],
    };
    fs.writeFileSync(path.join(dir, 'prometheus.yml'), stringify(config));
    const port = await freePort();
    this.url = `http://127.0.0.1:${port}`;
    const logFile = fs.openSync(path.join(dir, 'prometheus.log'), 'w');
    this.process = spawn(
      PROMETHEUS,
      [
        `--config.file=${path.join(dir, 'prometheus.yml')}`,
        `--storage.tsdb.path=${path.join(dir, 'data')}`,
        `--web.listen-address=127.0.0.1:${port}`,
      ],
      { stdio: ['ignore', logFile, logFile] },
    );
    await until('Prometheus ready', 30_000, async () => (await fetch(`${this.url}/-/ready`).catch(() => undefined))?.ok === true);
    await until('every target scraped', 30_000, async () => {
      const targetsUp = (await this.api<{ activeTargets: Array<{ health: string }> }>('/api/v1/targets')).activeTargets;
      return targetsUp.length === targets.length + 1 && targetsUp.every((t) => t.health === 'up');
    });
    // Rules evaluated before a target's first scrape see no `up` of it: ErpServiceDown goes pending, and
    // fires when that scrape comes over 3 s late (a first /metrics over its 900 ms timeout on a busy
    // machine). Every group evaluated once more with all targets up resolves it before traffic starts.
    const allUp = Date.now();
    const early = (await this.alerts()).map(
      (a) => `${a.labels.alertname}${a.labels.service ? ` of ${a.labels.service}` : ''} (${a.state})`,
    );
    if (early.length > 0) log(`before the rules saw every target up: ${early.join(', ')}`);
    await until('every rule group evaluated with every target up', 10_000, async () =>
      (await this.api<{ groups: Array<{ lastEvaluation: string }> }>('/api/v1/rules')).groups.every(
        (g) => Date.parse(g.lastEvaluation) > allUp,
      ),
    );
  }

  async api<T>(pathAndQuery: string): Promise<T> {
    const res = await fetch(`${this.url}${pathAndQuery}`);
    const body = (await res.json()) as { status: string; data: T; error?: string };
    if (body.status !== 'success') throw new Error(`${pathAndQuery}: ${body.error}`);
    return body.data;
  }

  async alerts(): Promise<Alert[]> {
    return (await this.api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts;
  }

  async series(metric: string): Promise<number> {
    return (await this.api<{ result: unknown[] }>(`/api/v1/query?query=${encodeURIComponent(metric)}`)).result.length;
  }

  stop(): void {
    this.process?.kill('SIGTERM');
  }
}

async function until(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<number> {
  const from = Date.now();
  for (;;) {
    if (await check().catch(() => false)) return Date.now() - from;
    if (Date.now() - from > timeoutMs) throw new Error(`${what}: not within ${timeoutMs / 1000} s`);
    await sleep(500);
  }
}

async function main(): Promise<number> {
  for (const binary of [PROMETHEUS, '/usr/bin/redis-server'])
    if (!fs.existsSync(binary)) throw new Error(`${binary} is missing: apt-get install prometheus redis-server`);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'erp-alerts-'));
  const cleanups: Array<() => Promise<void> | void> = [() => fs.rmSync(dir, { recursive: true, force: true })];
  const failures: string[] = [];
  try {
    const { groups, alerts } = await renderRules();
    log(`${alerts.length} alerts from the rendered chart`);

    // The gateway's own Redis, so that stopping it touches nobody else.
    const redisPort = await freePort();
    const redis = spawn('redis-server', ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
      stdio: 'ignore',
    });
    cleanups.push(() => void redis.kill('SIGKILL'));
    await sleep(300);

    const stack = await Stack.start({
      contract: false,
      gateway: { REDIS_URL: `redis://127.0.0.1:${redisPort}` },
      // Failed partner deliveries retried every half second; a receiver failing for 8 s is disabled.
      subscriptions: { EVENTS_POLL_MS: '100', EVENTS_RETRY_SCHEDULE_MS: '500', EVENTS_RETRY_WINDOW_MS: '8000' },
    });
    cleanups.push(() => stack.stop());
    const seeded = await stack.seed(
      webhookStore({
        nombre: 'Tienda Alertas',
        key: KEY,
        vender_sin_stock: true,
        productos: [
          {
            ref: 'mouse',
            nombre: 'Mouse',
            codigo: 'MOU-01',
            tipo: 'Producto',
            precio: 19.95,
            enable: 1,
            inventarios: [{ bodega: 'principal', stock: 500 }],
          },
        ],
        integraciones: [{ ref: 'woo', plataforma: 'woocommerce', secreto: WOO_SECRET }],
      }),
    );
    const woo = (seeded.empresas.tienda!.integraciones as Record<string, WebhookToken>).woo!;
    let orderId = 9000;
    // The shop's product 7 is our MOU-01; an unknown SKU on another product matches nothing.
    const sendOrder = async (sku: string, productId = 7) => {
      const body = JSON.stringify(
        wooOrder({
          id: ++orderId,
          status: 'processing',
          line_items: [{ product_id: productId, sku, name: sku, quantity: 1, total: '17.66', total_tax: '2.29' }],
        }),
      );
      const res = await deliver(stack.baseUrl, woo.path, body, wooHeaders(body, 'order.updated', WOO_SECRET));
      if (res.status !== 200) throw new Error(`webhook answered ${res.status}`);
    };
    const read = (route: string) => stack.api(`${API}${route}`, { key: KEY }).then((res) => res.status);
    const subscribe = async (url: string) => {
      const res = await stack.api(`${API}/event-subscriptions`, {
        key: KEY,
        method: 'POST',
        headers: { 'Content-Type': 'application/json' },
        body: JSON.stringify({ url, events: ['*'] }),
      });
      if (res.status !== 201) throw new Error(`subscription answered ${res.status}`);
    };

    const auditJobs = new AuditJobs();
    await auditJobs.start();
    cleanups.push(() => auditJobs.stop());
    const prometheus = new Prometheus();
    cleanups.push(() => prometheus.stop());
    await prometheus.start(
      dir,
      [...stack.running.entries()].map(([name, service]) => ({ name, port: service.opsPort })),
      auditJobs.port,
      groups,
    );
    log(`Prometheus at ${prometheus.url} scrapes ${stack.running.size} services`);

    // Healthy: traffic of every kind for a while, nothing pending or firing.
    const healthy = await TestReceiver.start();
    cleanups.push(() => healthy.stop());
    await subscribe(healthy.url);
    const healthyUntil = Date.now() + 20_000;
    const seenHealthy = new Set<string>();
    const describe = (alert: Alert) =>
      `${alert.labels.alertname}${alert.labels.service ? ` of ${alert.labels.service}` : ''} (${alert.state})`;
    while (Date.now() < healthyUntil) {
      await sendOrder('MOU-01');
      for (const route of ['/sales', '/inventory', '/sales/summary'])
        if ((await read(route)) !== 200) failures.push(`healthy: GET ${route} failed`);
      for (const alert of await prometheus.alerts()) seenHealthy.add(describe(alert));
      await sleep(300);
    }
    const audit = await auditJobs.run(stack.iso.databaseUrl);
    if (audit.failed) failures.push(`healthy: the audit found a violation:\n${audit.output}`);
    await sleep(5_000);
    for (const alert of await prometheus.alerts()) seenHealthy.add(describe(alert));
    if (healthy.delivered().length === 0) failures.push('healthy: no partner event was delivered');
    if (seenHealthy.size > 0) {
      failures.push(`healthy stack, yet: ${[...seenHealthy].join(', ')}`);
      // A scrape over its 900 ms timeout is an `up` of 0: which jobs, and how slow their scrapes were.
      const query = async (promql: string) =>
        (
          await prometheus.api<{ result: Array<{ metric: { job: string }; value: [number, string] }> }>(
            `/api/v1/query?query=${encodeURIComponent(promql)}`,
          )
        ).result
          .map((r) => `${r.metric.job} ${Number(r.value[1]).toFixed(2)}`)
          .join(', ');
      log(
        `failed scrapes in the last minute, by job: ${(await query('sum by (job) (count_over_time(up[1m]) - sum_over_time(up[1m])) > 0')) || 'none'}`,
      );
      log(`slowest scrape in the last minute (s), by job: ${await query('max by (job) (max_over_time(scrape_duration_seconds[1m]))')}`);
      const reads = await prometheus.api<{ result: Array<{ value: [number, string] }> }>(
        `/api/v1/query?query=${encodeURIComponent('sum(erp_http_request_duration_seconds_count{method="GET"}) - sum(erp_http_request_duration_seconds_bucket{method="GET",le="0.5"})')}`,
      );
      log(`reads slower than 0.5 s so far: ${reads.result[0]?.value[1] ?? 'none'}`);
    }
    log(
      `healthy for 25 s: ${seenHealthy.size === 0 ? 'no alert' : [...seenHealthy].join(', ')}; ${healthy.delivered().length} partner events delivered`,
    );
    for (const metric of [
      'erp_build_info',
      'erp_db_pool_connections',
      'erp_webhook_deliveries_processed_total{outcome="procesada"} > 0',
      'erp_partner_delivery_attempts_total{outcome="delivered"} > 0',
      'erp_partner_subscriptions{state="enabled"} > 0',
      'erp_webhook_deliveries_pending',
      'erp_inventory_open_reservations',
    ])
      if ((await prometheus.series(metric)) === 0) failures.push(`healthy: Prometheus has no ${metric}`);

    const fired: Array<{ alert: string; fault: string; seconds: number }> = [];
    const expectFiring = async (fault: string, alert: string, labels: Record<string, string> = {}) => {
      try {
        const ms = await until(`${alert} on ${fault}`, FIRING_TIMEOUT_MS, async () =>
          (await prometheus.alerts()).some(
            (a) => a.state === 'firing' && a.labels.alertname === alert && Object.entries(labels).every(([k, v]) => a.labels[k] === v),
          ),
        );
        fired.push({ alert, fault, seconds: Math.round(ms / 100) / 10 });
        log(`${alert} fires on ${fault} (${(ms / 1000).toFixed(1)} s)`);
      } catch (err) {
        failures.push((err as Error).message);
        log(`MISSING ${alert} on ${fault}`);
      }
    };

    // Slow reads: inventory's stock locked for 3 s while 80 reads of it wait behind the lock.
    const locker = new pg.Client({ connectionString: stack.iso.databaseUrl });
    await locker.connect();
    await locker.query('begin');
    await locker.query('lock table inventory.inventarios in access exclusive mode');
    const held = Promise.all(Array.from({ length: 80 }, () => read('/inventory')));
    await sleep(3_000);
    await locker.query('commit');
    await locker.end();
    if ((await held).some((status) => status !== 200)) failures.push('reads held behind a lock did not all answer 200');
    await expectFiring('reads held behind a lock', 'ErpLatencyBudgetBurn', { class: 'read' });

    // A partner receiver that answers 500: its attempts fail, then its subscription is disabled.
    const failing = await TestReceiver.start();
    failing.behave = () => 'fail';
    cleanups.push(() => failing.stop());
    await subscribe(failing.url);
    for (let i = 0; i < 3; i++) await sendOrder('MOU-01');
    await expectFiring('a failing partner receiver', 'ErpPartnerDeliveriesFailing');
    await expectFiring('a failing partner receiver', 'ErpPartnerSubscriptionsDisabled');

    // An order whose SKU the catalog does not have stays a failed delivery.
    await sendOrder('NO-SUCH-SKU', 8);
    await expectFiring('an order of an unknown product', 'ErpWebhookDeliveriesFailing');

    // Redis gone: the gateway counts quotas in-process.
    redis.kill('SIGKILL');
    const redisGone = setInterval(() => void read('/inventory').catch(() => undefined), 500);
    await expectFiring('Redis stopped', 'ErpRedisFallback');
    clearInterval(redisGone);

    // Sales stopped: its target is down, its reads answer 503, and the shop's orders keep coming: each
    // waits and its processing is retried. The redelivery alert is a ratio over 15 minutes, so it
    // needs the orders arriving while sales is away: one order retried alone (5 redeliveries in
    // 80 s) stays under 10 % of the deliveries settled while the stack was healthy.
    await stack.stopService('sales');
    const salesGone = setInterval(() => {
      void read('/sales').catch(() => undefined);
    }, 100);
    const ordersWaiting = setInterval(() => void sendOrder('MOU-01').catch(() => undefined), 1_000);
    await expectFiring('sales stopped', 'ErpServiceDown', { service: 'sales' });
    await expectFiring('sales stopped', 'ErpErrorBudgetBurn', { class: 'read' });
    await expectFiring('sales stopped', 'ErpWebhookDeliveriesAgeing');
    await expectFiring('sales stopped', 'ErpConsumerEventsAgeing', { consumer: 'webhook-ingest-deliveries' });
    await expectFiring('sales stopped', 'ErpConsumerRedeliveries', { consumer: 'webhook-ingest-deliveries' });
    clearInterval(ordersWaiting);
    clearInterval(salesGone);
    await stack.startService('sales');

    // A planted violation: stock that its ledger does not explain.
    await stack.query('update inventory.inventarios set stock = stock + 1');
    const planted = await auditJobs.run(stack.iso.databaseUrl);
    if (!planted.failed) failures.push('the audit did not find the planted violation');
    await expectFiring('a planted audit violation', 'ErpAuditFailed');

    // The intake stream lost: webhook-ingest's outbox cannot publish the next delivery's event.
    const jsm = await jetstreamManager(stack.admin.nc);
    await jsm.streams.delete(streamName(stack.iso.subjectPrefix, 'intake'));
    await sendOrder('MOU-01');
    await expectFiring('the intake stream lost', 'ErpOutboxEventsAgeing', { service: 'webhook-ingest' });

    const proven = new Set(fired.map((f) => f.alert));
    log(
      `fired on their faults: ${fired.length}; not induced here (promtool unit tests only): ${alerts.filter((a) => !proven.has(a)).join(', ')}`,
    );
    for (const f of fired) console.log(`  ${f.alert.padEnd(34)} ${String(f.seconds).padStart(5)} s  ${f.fault}`);
  } finally {
    for (const cleanup of cleanups.reverse()) await Promise.resolve(cleanup()).catch(() => undefined);
  }
  if (failures.length > 0) console.log(`FAILED:\n- ${failures.join('\n- ')}`);
  return failures.length > 0 ? 1 : 0;
}

main().then(
  (code) => process.exit(code),
  (err: unknown) => {
    console.error(err);
    process.exit(1);
  },
);
