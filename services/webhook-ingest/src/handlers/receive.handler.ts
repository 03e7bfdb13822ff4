import { enqueueEvent } from '@erp/bus';
import { AppError, webhookEvents, type ParsedRequestOf, type RequestContext, type webhookSubjects } from '@erp/contracts';
import { inTransaction } from '@erp/db';
import type { Kysely } from 'kysely';
import { findEntregaId, insertEntrega } from '../db/entrega.repository';
import { findIntegracionByTokenHash } from '../db/integracion.repository';
import type { WebhookDb } from '../db/tables';
import { classify, isRelevantHeader, isWooPing } from '../domain/classify';
import { SIGNATURE_HEADER, verifySignature } from '../domain/signature';
import { hashToken, tokenMatches } from '../domain/token';

type ReceiveRequest = ParsedRequestOf<typeof webhookSubjects, 'webhooks.receive'>;

const UNAUTHORIZED_TOKEN = 'Token de integración inválido o deshabilitado';
const UNAUTHORIZED_SIGNATURE = 'Firma del webhook inválida o ausente';

/**
 * Authenticates a delivery (token, then signature when the integration has a secret), stores it
 * with its dedup key and its event in one transaction, and answers. Processing happens later.
 */
export function receiveHandler(db: Kysely<WebhookDb>, onStored: () => void) {
  return async (req: ReceiveRequest, ctx: RequestContext) => {
    const integracion = await findIntegracionByTokenHash(db, hashToken(req.token));
    if (!integracion || !tokenMatches(req.token, integracion.token_hash) || !integracion.activo || integracion.plataforma !== req.plataforma) {
      throw new AppError('UNAUTHORIZED', UNAUTHORIZED_TOKEN);
    }
    const headers = Object.fromEntries(Object.entries(req.headers).filter(([name]) => isRelevantHeader(name)).map(([k, v]) => [k.toLowerCase(), v]));
    const body = Buffer.from(req.cuerpo_base64, 'base64');
    const delivery = { plataforma: req.plataforma, recurso: req.recurso, headers, body };

    // WooCommerce pings a new webhook's URL unsigned; a valid token is all it needs, and it stores nothing.
    if (isWooPing(delivery)) return { estado: 'ping' as const, id_entrega: null };
    if (integracion.secreto !== null && !verifySignature(body, integracion.secreto, headers[SIGNATURE_HEADER[req.plataforma]])) {
      throw new AppError('UNAUTHORIZED', UNAUTHORIZED_SIGNATURE);
    }
    const c = classify(delivery);
    if (c.kind === 'ping') return { estado: 'ping' as const, id_entrega: null };
    if (c.kind === 'ignorar') return { estado: 'ignorada' as const, id_entrega: null };

    const stored = await inTransaction(db, async (trx) => {
      const id = await insertEntrega(trx, {
        integracion_id: integracion.id,
        empresa_id: integracion.empresa_id,
        plataforma: req.plataforma,
        recurso: req.recurso,
        tema: c.tema,
        clave_dedup: c.clave,
        referencia: c.referencia,
        headers,
        cuerpo: body,
      });
      if (id === undefined) return undefined;
      await enqueueEvent(trx, webhookEvents, 'events.webhooks.delivery.received', { id_entrega: id, empresa_id: integracion.empresa_id }, ctx);
      return id;
    });
    if (stored !== undefined) {
      onStored();
      return { estado: 'recibida' as const, id_entrega: stored };
    }
    return { estado: 'duplicada' as const, id_entrega: (await findEntregaId(db, integracion.id, c.clave)) ?? null };
  };
}
