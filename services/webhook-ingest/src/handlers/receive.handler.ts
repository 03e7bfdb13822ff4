import { randomUUID } from 'node:crypto';
import { traceCarrier } from '@erp/bus';
import { AppError, type ParsedRequestOf, type RequestContext, type webhookSubjects } from '@erp/contracts';
import { classify, isRelevantHeader, isWooPing } from '../domain/classify';
import { SIGNATURE_HEADER, verifySignature } from '../domain/signature';
import { tokenMatches } from '../domain/token';
import type { EntregaBatcher } from '../workers/entrega-batcher.worker';
import type { IntegracionCache } from '../workers/integracion-cache.worker';

type ReceiveRequest = ParsedRequestOf<typeof webhookSubjects, 'webhooks.receive'>;

const UNAUTHORIZED_TOKEN = 'Token de integración inválido o deshabilitado';
const UNAUTHORIZED_SIGNATURE = 'Firma del webhook inválida o ausente';

/**
 * Authenticates a delivery (token, then signature when the integration has a secret), stores it
 * with its dedup key and its event (in a batch with the deliveries arriving with it, one commit),
 * and answers once that is committed. Processing happens later.
 */
export function receiveHandler(deps: { integraciones: IntegracionCache; entregas: EntregaBatcher; onReceived: () => void }) {
  return async (req: ReceiveRequest, ctx: RequestContext) => {
    const integracion = await deps.integraciones.find(req.token);
    if (
      !integracion ||
      !tokenMatches(req.token, integracion.token_hash) ||
      !integracion.activo ||
      integracion.plataforma !== req.plataforma
    ) {
      throw new AppError('UNAUTHORIZED', UNAUTHORIZED_TOKEN, undefined, { reason: 'token_invalido' });
    }
    const headers = Object.fromEntries(
      Object.entries(req.headers)
        .filter(([name]) => isRelevantHeader(name))
        .map(([k, v]) => [k.toLowerCase(), v]),
    );
    const body = Buffer.from(req.cuerpo_base64, 'base64');
    const delivery = { plataforma: req.plataforma, recurso: req.recurso, headers, body };

    // WooCommerce pings a new webhook's URL unsigned; a valid token is all it needs, and it stores nothing.
    if (isWooPing(delivery)) return { estado: 'ping' as const, id_entrega: null };
    if (integracion.secreto !== null && !verifySignature(body, integracion.secreto, headers[SIGNATURE_HEADER[req.plataforma]])) {
      throw new AppError('UNAUTHORIZED', UNAUTHORIZED_SIGNATURE, undefined, { reason: 'firma_invalida' });
    }
    const c = classify(delivery);
    if (c.kind === 'ping') return { estado: 'ping' as const, id_entrega: null };
    if (c.kind === 'ignorar') return { estado: 'ignorada' as const, id_entrega: null };

    deps.onReceived();
    return deps.entregas.store({
      integracion_id: integracion.id,
      empresa_id: integracion.empresa_id,
      plataforma: req.plataforma,
      recurso: req.recurso,
      tema: c.tema,
      clave_dedup: c.clave,
      referencia: c.referencia,
      headers,
      cuerpo: body,
      evento: { id: randomUUID(), context: ctx, trace: traceCarrier() },
    });
  };
}
