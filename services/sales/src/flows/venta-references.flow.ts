import type { Kysely, Transaction } from 'kysely';
import type { ReplyOf, TenantContext, inventorySubjects } from '@erp/contracts';
import { findVentaCatalog, findVentaCatalogs } from '../db/catalog.repository';
import type { SalesDb } from '../db/tables';
import type { ProductRef, VentaDraft, VentaResolutions } from '../domain/venta-plan';
import type { InventoryPort } from '../ports/inventory.port';

type Resolved = ReplyOf<typeof inventorySubjects, 'inventory.product.resolve'>;
type Branch = ReplyOf<typeof inventorySubjects, 'inventory.sucursal.resolve'>[number] | undefined;
type Catalog = Pick<VentaResolutions, 'documento' | 'canal' | 'cliente'>;

/** Products per `inventory.product.resolve` request (its limit). */
const MAX_RESOLVE_ITEMS = 500;

/**
 * Looks up everything a draft points to, at once: the branch, the warehouse and the products
 * from inventory in one request, the document type, channel and customer here in one statement.
 * `trx`, when given, is the transaction that holds the sale being updated: the lookup here runs
 * in it, so it never waits for another connection.
 */
export async function resolveReferences(
  db: Kysely<SalesDb>,
  inventory: InventoryPort,
  draft: VentaDraft,
  ctx: TenantContext,
  trx?: Transaction<SalesDb>,
): Promise<VentaResolutions> {
  const empresaId = ctx.empresa.id;
  const [products, catalog] = await Promise.all([
    inventory.resolve(ctx, { sucursal: draft.sucursal, id_bodega: draft.id_bodega, items: draft.detalles.map((d) => d.producto) }),
    findVentaCatalog(trx ?? db, empresaId, { documentoId: draft.id_documento, canalId: draft.id_canal, clienteId: draft.id_cliente }),
  ]);
  const branch = await branchOf(inventory, ctx, draft, products);
  return resolutionsOf(products, branch, products.items, catalog, draft);
}

/**
 * `resolveReferences` for the drafts of a batch, together: the products of the drafts that share
 * a branch and a warehouse (usually all) in one request to inventory, each product asked once;
 * the document types, channels and customers in one round trip. Resolutions in the drafts' order.
 */
export async function resolveReferencesOfMany(
  db: Kysely<SalesDb>,
  inventory: InventoryPort,
  drafts: readonly VentaDraft[],
  ctx: TenantContext,
): Promise<VentaResolutions[]> {
  // One draft's document type, channel and customer come in one statement.
  if (drafts.length === 1) return [await resolveReferences(db, inventory, drafts[0]!, ctx)];
  const refKey = (p: ProductRef) => ('id_producto' in p ? `id:${p.id_producto}` : `codigo:${p.codigo}`);
  const groups = new Map<string, { draft: VentaDraft; refs: Map<string, ProductRef> }>();
  const groupOf = (draft: VentaDraft) => JSON.stringify([draft.sucursal, draft.id_bodega]);
  for (const draft of drafts) {
    const group = groups.get(groupOf(draft)) ?? { draft, refs: new Map<string, ProductRef>() };
    for (const d of draft.detalles) group.refs.set(refKey(d.producto), d.producto);
    groups.set(groupOf(draft), group);
  }
  const resolveGroup = async ({ draft, refs }: { draft: VentaDraft; refs: Map<string, ProductRef> }) => {
    const keys = [...refs.keys()];
    const chunks = Array.from({ length: Math.max(1, Math.ceil(keys.length / MAX_RESOLVE_ITEMS)) }, (_, i) =>
      keys.slice(i * MAX_RESOLVE_ITEMS, (i + 1) * MAX_RESOLVE_ITEMS),
    );
    const answers = await Promise.all(
      chunks.map((chunk) =>
        inventory.resolve(ctx, { sucursal: draft.sucursal, id_bodega: draft.id_bodega, items: chunk.map((k) => refs.get(k)!) }),
      ),
    );
    const items = new Map(chunks.flatMap((chunk, i) => chunk.map((k, j) => [k, answers[i]!.items[j]!] as const)));
    const branch = await branchOf(inventory, ctx, draft, answers[0]!);
    return { products: answers[0]!, branch, items };
  };
  const [resolved, catalogs] = await Promise.all([
    Promise.all([...groups].map(async ([key, group]) => [key, await resolveGroup(group)] as const)),
    findVentaCatalogs(db, ctx.empresa.id, {
      documentoIds: drafts.map((d) => d.id_documento),
      canalIds: drafts.flatMap((d) => (d.id_canal !== null ? [d.id_canal] : [])),
      clienteIds: drafts.flatMap((d) => (d.id_cliente !== null ? [d.id_cliente] : [])),
    }),
  ]);
  const byGroup = new Map(resolved);
  return drafts.map((draft) => {
    const { products, branch, items } = byGroup.get(groupOf(draft))!;
    const catalog = {
      documento: catalogs.documentos.get(draft.id_documento),
      canal: draft.id_canal !== null ? catalogs.canales.get(draft.id_canal) : undefined,
      cliente: draft.id_cliente !== null ? catalogs.clientes.get(draft.id_cliente) : undefined,
    };
    return resolutionsOf(
      products,
      branch,
      draft.detalles.map((d) => items.get(refKey(d.producto))!),
      catalog,
      draft,
    );
  });
}

/** An inventory that predates branch resolution in `inventory.product.resolve` answers without it: asked apart. */
async function branchOf(inventory: InventoryPort, ctx: TenantContext, draft: VentaDraft, products: Resolved) {
  return products.sucursal ?? (await inventory.resolveSucursal(ctx, { items: [draft.sucursal] }))[0];
}

function resolutionsOf(
  products: Resolved,
  branch: Branch,
  items: Resolved['items'],
  catalog: Catalog,
  draft: VentaDraft,
): VentaResolutions {
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
    productos: items.map((item) => (item.ok ? { ok: true as const, value: item.producto } : item)),
    ...catalog,
  };
}
