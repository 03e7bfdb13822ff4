import type { Kysely } from 'kysely';
import { enqueueEvent, type Bus } from '@erp/bus';
import {
  AppError,
  Return,
  returnsEvents,
  type ParsedRequestOf,
  type ReplyInputOf,
  type RequestContext,
  type returnsAdminSubjects,
} from '@erp/contracts';
import { inTransaction } from '@erp/db';
import { annulDevolucion, lockDevolucion } from '../db/devolucion.repository';
import { findDevolucion } from '../db/devolucion-read.repository';
import type { ReturnsDb } from '../db/tables';
import { settleStock } from './settle-stock.flow';

export type AnnulRequest = ParsedRequestOf<typeof returnsAdminSubjects, 'returns.admin.annul'>;
type AnnulReply = ReplyInputOf<typeof returnsAdminSubjects, 'returns.admin.annul'>;

export interface AnnulDevolucionDeps {
  db: Kysely<ReturnsDb>;
  bus: Bus;
  onCommitted?: () => void;
}

/**
 * Annuls a return: `enable` 0 and the annulled event in one transaction that holds the return's
 * row, then its stock movement reversed once. Annulling it again changes nothing, but still
 * completes a reversal an earlier call could not (inventory unreachable).
 */
export async function annulDevolucionFlow(
  deps: AnnulDevolucionDeps,
  { empresa_id, id_devolucion }: AnnulRequest,
  reqCtx: RequestContext,
): Promise<AnnulReply> {
  const { db, bus } = deps;
  const annulled = await inTransaction(db, async (trx) => {
    const devolucion = await lockDevolucion(trx, empresa_id, id_devolucion);
    if (!devolucion) throw AppError.notFound('devolucion_no_encontrada', 'Devolución no encontrada');
    if (!devolucion.enable) return false;
    await annulDevolucion(trx, devolucion.id);
    await enqueueEvent(
      trx,
      returnsEvents,
      'events.returns.return.annulled',
      {
        empresa_id,
        id_devolucion: devolucion.id,
        id_venta: devolucion.venta_id,
        total: devolucion.total,
        devolucion: Return.parse(await findDevolucion(trx, empresa_id, devolucion.id)),
      },
      reqCtx,
    );
    return true;
  });
  if (annulled) deps.onCommitted?.();
  try {
    await settleStock(db, bus, empresa_id, id_devolucion, reqCtx);
  } catch (err) {
    bus.logger.warn(
      { err, empresaId: empresa_id, idDevolucion: id_devolucion },
      'stock of an annulled return not reversed yet; the consumer of its event will',
    );
  }
  const devolucion = await findDevolucion(db, empresa_id, id_devolucion);
  if (!devolucion) throw AppError.notFound('devolucion_no_encontrada', 'Devolución no encontrada');
  return devolucion;
}
