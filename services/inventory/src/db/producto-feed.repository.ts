import type { Kysely } from 'kysely';
import type { InventoryListRequest } from '@erp/contracts';
import { readChangePage, type ChangeCursor, type ChangePage } from '@erp/db';
import { changedProductos } from './producto-list.repository';
import { PRODUCTO_COLUMNS, inventariosOf, type ProductoWithStock } from './producto-read.repository';
import type { InventoryDb } from './tables';

/**
 * Delta sync: one page of the products that changed after a position (see `readChangePage`). A
 * product's stamp and `updated_at` move with its stock too (migration 0007). The page's products
 * are picked first, then only they are read with their stock. Run it in a repeatable-read
 * transaction: rows, stock and horizon then come from one snapshot.
 */
export async function listProductoChanges(
  trx: Kysely<InventoryDb>,
  empresaId: number,
  request: InventoryListRequest,
  after: ChangeCursor | undefined,
): Promise<ChangePage<ProductoWithStock>> {
  const page = await readChangePage(changedProductos(trx, empresaId, request).select('p.id'), {
    table: 'p',
    after,
    perPage: request.per_page,
  });
  const rows =
    page.rows.length === 0
      ? []
      : await trx
          .selectFrom('productos as p')
          .leftJoin('categorias as c', 'c.id', 'p.categoria_id')
          .select(PRODUCTO_COLUMNS)
          .select((eb) => inventariosOf(eb, empresaId, false))
          .where('p.empresa_id', '=', empresaId)
          .where(
            'p.id',
            'in',
            page.rows.map((r) => r.id),
          )
          .execute();
  const byId = new Map<number, ProductoWithStock>(rows.map((r) => [r.id, r]));
  return { ...page, rows: page.rows.map((r) => byId.get(r.id)!) };
}
