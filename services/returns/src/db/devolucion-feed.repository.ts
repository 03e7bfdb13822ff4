import type { Transaction } from 'kysely';
import type { ReturnInput, ReturnsListRequest } from '@erp/contracts';
import { readChangePage, type ChangeCursor, type ChangePage } from '@erp/db';
import { toDevolucion } from '../domain/devolucion-row';
import { filteredDevoluciones } from './devolucion-list.repository';
import { detallesOf, DEVOLUCION_COLUMNS } from './devolucion-read.repository';
import type { ReturnsDb } from './tables';

/**
 * Delta sync: one page of the company's returns changed after a position (see `readChangePage`),
 * with their lines. Run it in a repeatable-read transaction so rows,
 * lines and horizon share one snapshot.
 */
export async function listDevolucionChanges(
  trx: Transaction<ReturnsDb>,
  empresaId: number,
  request: ReturnsListRequest,
  after: ChangeCursor | undefined,
): Promise<ChangePage<ReturnInput>> {
  let q = filteredDevoluciones(trx, empresaId, request);
  if (request.updated_since !== undefined) q = q.where('d.updated_at', '>=', new Date(request.updated_since));
  const page = await readChangePage(q.select(DEVOLUCION_COLUMNS), { table: 'd', after, perPage: request.per_page });
  const detalles = await detallesOf(
    trx,
    empresaId,
    page.rows.map((r) => r.id),
  );
  return { ...page, rows: page.rows.map((r) => toDevolucion(r, detalles.get(r.id) ?? [])) };
}
