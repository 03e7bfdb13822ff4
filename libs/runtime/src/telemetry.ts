import { NodeSDK } from '@opentelemetry/sdk-node';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { ExpressInstrumentation } from '@opentelemetry/instrumentation-express';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { WEBHOOK_BASE } from '@erp/contracts';

/** The segment after `/api/webhook/<platform>/` is an integration's token: a credential. Express routes ignore case, so does this. */
const WEBHOOK_TOKEN_RE = new RegExp(`^(${WEBHOOK_BASE}/[^/]+/)[^/]+`, 'i');

/**
 * The path as telemetry may keep it: a webhook token is replaced by `:token`, whatever follows
 * it (a route that does not exist included), so no span attribute carries the credential.
 */
export function redactUrlPath(path: string): string {
  return path.replace(WEBHOOK_TOKEN_RE, '$1:token');
}

/**
 * OpenTelemetry for the process. Imported first by every entry point so that http, express, pg
 * and ioredis are instrumented before they load. It follows the standard OTEL_* variables:
 * spans are exported over OTLP/HTTP when OTEL_EXPORTER_OTLP_ENDPOINT is set, one trace from the
 * gateway's HTTP span through NATS to the SQL. Without an endpoint nothing is instrumented and the
 * sampler is always_off (unless OTEL_TRACES_SAMPLER says otherwise): spans nobody exports would
 * only cost CPU on every request.
 */
function startTelemetry(): NodeSDK | undefined {
  if (process.env.OTEL_SDK_DISABLED === 'true') return undefined;
  // Metrics are scraped from /metrics (prom-client) and logs go to stdout: the SDK exports traces only.
  process.env.OTEL_METRICS_EXPORTER ??= 'none';
  process.env.OTEL_LOGS_EXPORTER ??= 'none';
  const exporting = Boolean(process.env.OTEL_EXPORTER_OTLP_ENDPOINT || process.env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT);
  if (!exporting) process.env.OTEL_TRACES_SAMPLER ??= 'always_off';
  const sdk = new NodeSDK({
    serviceName: process.env.OTEL_SERVICE_NAME ?? 'erp',
    ...(exporting ? { traceExporter: new OTLPTraceExporter() } : { spanProcessors: [] }),
    instrumentations: exporting
      ? [
          new HttpInstrumentation({
            ignoreIncomingRequestHook: (req) => /^\/(healthz|readyz|metrics)/.test(req.url ?? ''),
            // Replaces the `url.path` the instrumentation takes from the request line.
            startIncomingSpanHook: (req) => ({ 'url.path': redactUrlPath((req.url ?? '/').split('?')[0]!) }),
          }),
          new ExpressInstrumentation(),
          new PgInstrumentation({ requireParentSpan: true }),
          new IORedisInstrumentation({ requireParentSpan: true }),
        ]
      : [],
  });
  sdk.start();
  return sdk;
}

export const telemetry = startTelemetry();

/** Flushes pending spans; part of the shutdown sequence. */
export async function stopTelemetry(): Promise<void> {
  await telemetry?.shutdown().catch(() => undefined);
}
