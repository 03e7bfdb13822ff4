import { randomUUID } from 'node:crypto';
import { sql, type Kysely } from 'kysely';
import type { WebhookDb } from '../../../services/webhook-ingest/src/db/tables';
import { classify, isRelevantHeader } from '../../../services/webhook-ingest/src/domain/classify';
import { SIGNATURE_HEADER, verifySignature } from '../../../services/webhook-ingest/src/domain/signature';
import { findIntegracionByTokenHash } from '../../../services/webhook-ingest/src/db/integracion.repository';
import { hashToken } from '../../../services/webhook-ingest/src/domain/token';

/** Where the baseline stores what it accepts: tables of the same definition as webhook-ingest's, which nothing processes. */
const SCHEMA = 'bench_baseline';

export type WebhookRoute = (
  path: string,
  headers: Record<string, string>,
  body: Buffer,
) => Promise<{ status: number; data: unknown }> | undefined;

/**
 * The baseline of the webhook burst's acceptance: node:http and one pg pool doing what accepting
 * a delivery must do, and nothing else: the integration found by its token (remembered, as the
 * service's cache does), the signature verified, the delivery classified by webhook-ingest's own
 * code, and the row stored with its outbox row in one statement per request, in tables of the same
 * definition and indexes as webhook-ingest's (`bench_baseline`, so no sale is made of them). No
 * gateway, NATS hop, quota or group commit in between: the ratio to it prices the path of a delivery.
 */
export async function webhookRoutes(db: Kysely<WebhookDb>): Promise<WebhookRoute> {
  await sql`create schema if not exists ${sql.id(SCHEMA)}`.execute(db);
  await sql`drop table if exists ${sql.id(SCHEMA, 'entregas')}, ${sql.id(SCHEMA, 'outbox')}`.execute(db);
  await sql`create table ${sql.id(SCHEMA, 'entregas')} (like webhook_ingest.entregas including all)`.execute(db);
  await sql`create table ${sql.id(SCHEMA, 'outbox')} (like webhook_ingest.outbox including all)`.execute(db);
  const integraciones = new Map<string, Awaited<ReturnType<typeof findIntegracionByTokenHash>>>();

  return (path, headers, body) => {
    const match = /^\/api\/webhook\/(woocommerce|shopify)\/([^/]+)$/.exec(path);
    if (!match) return undefined;
    const plataforma = match[1] as 'woocommerce' | 'shopify';
    const token = match[2]!;
    return (async () => {
      if (!integraciones.has(token)) integraciones.set(token, await findIntegracionByTokenHash(db, hashToken(token)));
      const integracion = integraciones.get(token);
      if (!integracion || integracion.plataforma !== plataforma) return { status: 401, data: 'token' };
      const relevant = Object.fromEntries(Object.entries(headers).filter(([name]) => isRelevantHeader(name)));
      if (integracion.secreto !== null && !verifySignature(body, integracion.secreto, relevant[SIGNATURE_HEADER[plataforma]]))
        return { status: 401, data: 'firma' };
      const c = classify({ plataforma, recurso: 'pedido', headers: relevant, body });
      if (c.kind !== 'entrega') return { status: 200, data: { estado: c.kind } };
      const { rows } = await sql<{ id: number }>`
        with nueva as (
          insert into ${sql.id(SCHEMA, 'entregas')} (integracion_id, empresa_id, plataforma, recurso, tema, clave_dedup, referencia, headers, cuerpo, origen)
          values (${integracion.id}, ${integracion.empresa_id}, ${plataforma}, 'pedido', ${c.tema}, ${c.clave}, ${c.referencia},
                  ${JSON.stringify(relevant)}::jsonb, ${body}, 'webhook')
          on conflict (integracion_id, clave_dedup) do nothing
          returning id, empresa_id
        ),
        evento as (
          insert into ${sql.id(SCHEMA, 'outbox')} (id, subject, payload, context, trace)
          select ${randomUUID()}::uuid, 'intake.webhooks.delivery.received', jsonb_build_object('id_entrega', id, 'empresa_id', empresa_id), '{}'::jsonb, '{}'::jsonb
          from nueva
        )
        select id from nueva`.execute(db);
      return { status: 200, data: { estado: rows.length > 0 ? 'recibida' : 'duplicada', id_entrega: rows[0]?.id ?? null } };
    })();
  };
}
