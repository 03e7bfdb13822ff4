import { createHash } from 'node:crypto';
import { AppError, canonicalJson, type SaleCreateRequest } from '@erp/contracts';
import type { VentaReferenciada } from '../db/venta-read.repository';

/**
 * The fingerprint of a request to create a sale: SHA-256 of the canonical JSON of the request as
 * validated (text trimmed, blanks absent), so key order and formatting do not count. `referencia`
 * is folded into `referencia_externa` (its alias) and `origen` is left out: it is who sent it,
 * not what was asked for.
 */
export function huellaOf(req: SaleCreateRequest): string {
  const { referencia, origen, ...rest } = req;
  void origen;
  const pedido = { ...rest, referencia_externa: rest.referencia_externa ?? referencia };
  return createHash('sha256').update(canonicalJson(pedido)).digest('hex');
}

/**
 * A partner's request whose reference names a sale made from another body is refused with the
 * sale it names: answering that sale would tell the partner its new lines were booked. Sales kept
 * before fingerprints were (`huella` null) answer any retry as before. Platform orders and
 * fixtures are exempt: their retries rebuild the body from data that may have changed since
 * (mappings, the shipping product), and their reference is the order, whatever it carries now.
 */
export function referenciaConflict(req: SaleCreateRequest, huella: string, existente: VentaReferenciada): AppError | undefined {
  if (req.origen !== 'api' || existente.huella === null || existente.huella === huella) return undefined;
  const referencia = req.referencia_externa ?? req.referencia;
  const message = `La referencia_externa ${referencia} ya se usó en la venta ${existente.id} (${existente.correlativo}) con otro contenido`;
  return new AppError(
    'CONFLICT',
    message,
    { referencia_externa: [message], id_venta: [String(existente.id)], correlativo: [existente.correlativo] },
    { reason: 'referencia_en_conflicto' },
  );
}
