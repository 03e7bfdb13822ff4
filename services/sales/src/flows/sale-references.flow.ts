import type { Kysely, Transaction } from 'kysely';
import type { TenantContext } from '@erp/contracts';
import { findVentaCatalog } from '../db/catalog.repository';
import type { SalesDb } from '../db/tables';
import type { SaleDraft, SaleResolutions } from '../domain/sale-plan';
import type { InventoryPort } from '../ports/inventory.port';

/**
 * Looks up everything a draft points to, at once: the branch, the warehouse and the products
 * from inventory in one request, the document type, channel and customer here in one statement.
 * `trx`, when given, is the transaction that holds the sale being updated: the lookups run in it,
 * so they never wait for another connection.
 */
export async function resolveReferences(
  db: Kysely<SalesDb>,
  inventory: InventoryPort,
  draft: SaleDraft,
  ctx: TenantContext,
  trx?: Transaction<SalesDb>,
): Promise<SaleResolutions> {
  const empresaId = ctx.empresa.id;
  const [products, { documento, canal, cliente }] = await Promise.all([
    inventory.resolve(ctx, { sucursal: draft.sucursal, id_bodega: draft.id_bodega, items: draft.detalles.map((d) => d.producto) }, trx),
    findVentaCatalog(trx ?? db, empresaId, { documentoId: draft.id_documento, canalId: draft.id_canal, clienteId: draft.id_cliente }),
  ]);
  // An inventory that predates branch resolution in this request answers without it: ask apart.
  const branch = products.sucursal ?? (await inventory.resolveSucursal(ctx, { items: [draft.sucursal] }, trx))[0];
  const bodega = products.bodega;
  return {
    sucursal: !branch
      ? { ok: false, message: 'La sucursal no existe' }
      : branch.ok
        ? { ok: true, value: { id: branch.id_sucursal, nombre: branch.nombre } }
        : branch,
    bodega: !bodega
      ? { ok: false, message: `La bodega ${draft.id_bodega} no existe` }
      : bodega.ok
        ? { ok: true, value: { id: bodega.id_bodega, nombre: bodega.nombre, id_sucursal: bodega.id_sucursal } }
        : bodega,
    productos: products.items.map((item) => (item.ok ? { ok: true as const, value: item.producto } : item)),
    documento,
    canal,
    cliente,
  };
}
