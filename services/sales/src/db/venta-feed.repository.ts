import type { Transaction } from 'kysely';
import type { SaleInput, SalesListRequest } from '@erp/contracts';
import { readChangePage, type ChangeCursor, type ChangePage } from '@erp/db';
import { toVenta } from '../domain/venta-row';
import { filteredVentas } from './venta-list.repository';
import { detallesOf, VENTA_COLUMNS } from './venta-read.repository';
import type { SalesDb } from './tables';

/**
 * Delta sync: one page of the company's sales changed after a position (see `readChangePage`),
 * with their lines. Run it in a repeatable-read transaction: the rows,
 * their lines and the horizon then come from one snapshot.
 */
export async function listVentaChanges(
  trx: Transaction<SalesDb>,
  empresaId: number,
  request: SalesListRequest,
  after: ChangeCursor | undefined,
): Promise<ChangePage<SaleInput>> {
  let q = filteredVentas(trx, empresaId, request);
  if (request.updated_since !== undefined) q = q.where('v.updated_at', '>=', new Date(request.updated_since));
  const page = await readChangePage(q.select(VENTA_COLUMNS), { table: 'v', after, perPage: request.per_page });
  const detalles = await detallesOf(
    trx,
    empresaId,
    page.rows.map((r) => r.id),
  );
  return { ...page, rows: page.rows.map((r) => toVenta(r, detalles.get(r.id) ?? [])) };
}
