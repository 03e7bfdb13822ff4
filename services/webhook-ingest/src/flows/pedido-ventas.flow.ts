import type { Transaction } from 'kysely';
import type { TenantContext } from '@erp/contracts';
import type { LockedEntrega } from '../db/entrega.repository';
import { setProductoEnvio } from '../db/integracion.repository';
import { findMapeos, upsertMapeo } from '../db/mapeo.repository';
import type { WebhookDb } from '../db/tables';
import { chunks } from '../domain/chunks';
import { Unprocessable } from '../domain/failures';
import { UnprocessablePedido, planPedidoVenta, type PedidoIntent, type ProductoLine, type VentaPlan } from '../domain/pedidos';
import type { CatalogPort, InventoryPort } from '../ports/inventory.port';
import type { CreateVentaInput, VentasPort } from '../ports/sales.port';

/** What making orders' sales needs of the other services. */
export interface PedidoVentaDeps {
  sales: VentasPort;
  catalog: CatalogPort;
  inventory: InventoryPort;
  context(empresaId: number, usuarioId: number, requestId: string): Promise<TenantContext>;
}

/** A new order whose sale is to be made: its delivery (locked), what it asks, and the sale's state. */
export interface NuevoPedido {
  entrega: LockedEntrega;
  intent: PedidoIntent;
  estado: 'Completada' | 'Pendiente';
}

/** The sale made for an order; `idempotent` when it had been made before (a delivery replayed after a crash). */
export type MadeVenta = { id: number; idempotent: boolean };

/** The code of the service product a company's platform shipping and fees are sold as, when its integration names none. */
export const CODIGO_ENVIO = 'ENVIO';

/** Customers looked up or created at once while a group's sales are prepared. */
const CLIENTES_AT_ONCE = 8;

/** Items one `inventory.product.resolve` takes. */
const RESOLVE_MAX = 500;

/** Runs `read`, telling an order the domain cannot turn into a sale as unprocessable. */
export const intentOf = <T>(read: () => T): T => {
  try {
    return read();
  } catch (err) {
    if (err instanceof UnprocessablePedido) throw new Unprocessable(err.message);
    throw err;
  }
};

/**
 * Makes the sales of new orders of one integration, in their order: the catalog and the stored
 * mappings are read once for all their lines, each customer is looked up once, and the sales are
 * made by one `sales.create` (one order) or one `sales.batch.create` (several), the pipeline a
 * partner's batch takes. Answers, per order, its sale or what kept it from being made; an order
 * that failed wrote nothing of its own (a mapping or the integration's service product, shared and
 * right whatever happens to the order, may stay). A sale the batch refused or did not reach
 * answers `Deferred`: made alone, its refusal is told as usual.
 */
export async function makePedidoVentas(
  trx: Transaction<WebhookDb>,
  pedidos: readonly NuevoPedido[],
  deps: PedidoVentaDeps,
  requestId: string,
): Promise<Array<MadeVenta | Error>> {
  if (pedidos.length === 0) return [];
  const { entrega: first } = pedidos[0]!;
  const results: Array<MadeVenta | Error | undefined> = pedidos.map(() => undefined);
  const fail = (i: number) => (err: unknown) => {
    results[i] = err instanceof Error ? err : new Error(String(err));
  };
  const plans = pedidos.map((pedido, i) => attempt(() => planVenta(pedido), fail(i)));
  if (plans.every((plan) => plan === undefined)) return results as Error[];
  const ctx = await deps.context(first.empresa_id, first.usuario_id, requestId);
  const ready = await ventaInputs(trx, ctx, { pedidos, plans, results, fail }, deps);
  if (ready.length === 1) {
    const [{ i, input }] = ready as [(typeof ready)[number]];
    results[i] = await deps.sales.createVenta(ctx, input).catch((err: unknown) => (err instanceof Error ? err : new Error(String(err))));
  } else if (ready.length > 1) {
    const made = await deps.sales.createVentas(
      ctx,
      ready.map((r) => r.input),
    );
    ready.forEach(({ i }, k) => {
      results[i] = made[k] ?? new Deferred();
    });
  }
  return results.map((r) => r ?? new Deferred());
}

/** New orders whose sales are made together: the plan of each, and each one's result once it has one. */
interface Grupo {
  pedidos: readonly NuevoPedido[];
  plans: ReadonlyArray<VentaPlan | undefined>;
  results: Array<MadeVenta | Error | undefined>;
  /** Records the failure of the order at `i`. */
  fail: (i: number) => (err: unknown) => void;
}

/**
 * The sale of each order of the group not failed yet, as the pipeline takes it: the catalog and
 * the stored mappings are read once for all their lines, the service product and each customer
 * once. What keeps an order from its sale fails that order alone.
 */
async function ventaInputs(
  trx: Transaction<WebhookDb>,
  ctx: TenantContext,
  { pedidos, plans, results, fail }: Grupo,
  deps: PedidoVentaDeps,
): Promise<Array<{ i: number; input: CreateVentaInput }>> {
  const { entrega: first } = pedidos[0]!;
  const lookup = await lookUpLineas(
    trx,
    first,
    pedidos.flatMap((o, i) => (plans[i] ? o.intent.productos : [])),
    ctx,
    deps.inventory,
  );
  const productos: Array<number[] | undefined> = [];
  for (const [i, pedido] of pedidos.entries()) {
    productos[i] = plans[i]
      ? await attemptAsync(() => productosOf(trx, pedido.entrega, pedido.intent.productos, lookup), fail(i))
      : undefined;
  }
  const needServicio = pedidos.filter((_, i) => productos[i] && plans[i]!.lineas.some((l) => 'servicio' in l.origen));
  let servicio: number | null = null;
  if (needServicio.length > 0) {
    servicio =
      (await attemptAsync(
        () => productoServicio(trx, first, ctx, deps),
        (err) => pedidos.forEach((o, i) => needServicio.includes(o) && fail(i)(err)),
      )) ?? null;
  }
  const clientes = await clientesOf(
    ctx,
    pedidos.filter((_, i) => results[i] === undefined),
    deps.sales,
  );
  const ready: Array<{ i: number; input: CreateVentaInput }> = [];
  for (const [i, pedido] of pedidos.entries()) {
    if (results[i] !== undefined) continue;
    const input = attempt(() => ventaInput(pedido, plans[i]!, productos[i]!, servicio, clientes), fail(i));
    if (input) ready.push({ i, input });
  }
  return ready;
}

/** A sale a group could not make: the order is made alone. */
export class Deferred extends Error {
  override readonly name = 'Deferred';
  constructor() {
    super('La venta se hace sola, fuera del grupo');
  }
}

function attempt<T>(step: () => T, onError: (err: unknown) => void): T | undefined {
  try {
    return step();
  } catch (err) {
    onError(err);
    return undefined;
  }
}

async function attemptAsync<T>(step: () => Promise<T>, onError: (err: unknown) => void): Promise<T | undefined> {
  try {
    return await step();
  } catch (err) {
    onError(err);
    return undefined;
  }
}

/** What a new order must have before anything is looked up for its sale: a sale document, lines, a plan. */
function planVenta({ entrega, intent }: NuevoPedido): VentaPlan {
  if (entrega.documento_id === null) throw new Unprocessable('La integración no tiene documento de venta configurado');
  if (intent.productos.length === 0) throw new Unprocessable('El pedido no tiene líneas');
  return intentOf(() => planPedidoVenta(intent));
}

/**
 * The customers of the orders by email, each looked up (or created) once, a few at a time. An
 * email whose lookup failed answers the error, which fails the orders of that email only.
 */
async function clientesOf(ctx: TenantContext, pedidos: readonly NuevoPedido[], sales: VentasPort): Promise<Map<string, number | Error>> {
  const byEmail = new Map<string, string | null>();
  for (const { intent } of pedidos)
    if (intent.cliente.email && !byEmail.has(intent.cliente.email)) byEmail.set(intent.cliente.email, intent.cliente.nombre);
  const found = new Map<string, number | Error>();
  for (const part of chunks([...byEmail], CLIENTES_AT_ONCE)) {
    await Promise.all(
      part.map(async ([email, nombre]) => {
        found.set(
          email,
          await sales
            .findOrCreateCliente(ctx, { email, nombre })
            .catch((err: unknown) => (err instanceof Error ? err : new Error(String(err)))),
        );
      }),
    );
  }
  return found;
}

/** The sale of a new order as the pipeline takes it. */
function ventaInput(
  { entrega, intent, estado }: NuevoPedido,
  plan: VentaPlan,
  productos: number[],
  servicio: number | null,
  clientes: Map<string, number | Error>,
): CreateVentaInput {
  const cliente = intent.cliente.email ? clientes.get(intent.cliente.email) : undefined;
  if (cliente instanceof Error) throw cliente;
  if (cliente === undefined && estado === 'Pendiente') throw new Unprocessable('Un pedido pendiente necesita el email del cliente');
  const servicios = plan.lineas.flatMap((l) => ('servicio' in l.origen ? [l.origen.servicio] : []));
  const observaciones = [
    `Pedido ${intent.referencia} (${entrega.plataforma})`,
    ...(servicios.length > 0 ? [`Servicios: ${servicios.join(', ')}`] : []),
    ...plan.notas,
  ]
    .join('. ')
    .slice(0, 1000);
  return {
    referencia_externa: intent.referencia,
    fecha: intent.fecha,
    estado,
    id_sucursal: entrega.sucursal_id,
    id_bodega: entrega.bodega_id,
    id_documento: entrega.documento_id!,
    ...(entrega.canal_id !== null ? { id_canal: entrega.canal_id } : {}),
    ...(cliente !== undefined ? { id_cliente: cliente } : {}),
    ...(intent.forma_pago ? { forma_pago: intent.forma_pago } : {}),
    observaciones,
    permitir_sin_stock: true,
    origen: entrega.plataforma,
    detalles: plan.lineas.map((l) => ({
      id_producto: 'producto' in l.origen ? productos[l.origen.producto]! : servicio!,
      cantidad: l.cantidad,
      precio: l.precio,
      descuento: l.descuento,
    })),
  };
}

/**
 * The service product shipping, fees and adjustments are sold as: the integration's, else the
 * company's `ENVIO` (created as a `Servicio` the first time, so it never moves stock), which the
 * integration then remembers.
 */
async function productoServicio(
  trx: Transaction<WebhookDb>,
  entrega: LockedEntrega,
  ctx: TenantContext,
  deps: Pick<PedidoVentaDeps, 'inventory' | 'catalog'>,
): Promise<number> {
  const query = entrega.producto_envio_id !== null ? { id_producto: entrega.producto_envio_id } : { codigo: CODIGO_ENVIO };
  const [item] = (await deps.inventory.resolve(ctx, { items: [query] })).items;
  let id: number;
  if (item?.ok) {
    if (item.producto.tipo !== 'Servicio') {
      throw new Unprocessable(`El producto ${item.producto.codigo} de envíos y cargos no es un Servicio: movería stock`);
    }
    id = item.producto.id;
  } else if (entrega.producto_envio_id !== null) {
    throw new Unprocessable(`El producto de envíos y cargos de la integración (id ${entrega.producto_envio_id}) no existe`);
  } else {
    id = await deps.catalog.createProducto(ctx, {
      codigo: CODIGO_ENVIO,
      nombre: 'Envío y cargos de pedidos en línea',
      precio: '0',
      enable: 1,
      tipo: 'Servicio',
    });
  }
  if (entrega.producto_envio_id !== id) await setProductoEnvio(trx, entrega.integracion_id, id);
  return id;
}

/** The platform id whose stored mapping serves a line: its variant's, or its product's when it has no variant. */
const mapeoKey = (l: ProductoLine): string | null => l.id_variante ?? l.id_producto_externo;

/** What the catalog says of each SKU (a product, or why none) and the stored mapping of each platform id: read once for many orders. */
interface LineaLookup {
  bySku: Map<string, { id: number } | { problem: string }>;
  mapeos: Map<string, number>;
}

async function lookUpLineas(
  trx: Transaction<WebhookDb>,
  entrega: LockedEntrega,
  lineas: readonly ProductoLine[],
  ctx: TenantContext,
  inventory: InventoryPort,
): Promise<LineaLookup> {
  const bySku: LineaLookup['bySku'] = new Map();
  const skus = [...new Set(lineas.flatMap((l) => (l.sku !== null ? [l.sku] : [])))];
  for (const part of chunks(skus, RESOLVE_MAX)) {
    const reply = await inventory.resolve(ctx, { items: part.map((codigo) => ({ codigo })) });
    part.forEach((sku, k) => {
      const item = reply.items[k];
      if (item?.ok) bySku.set(sku, { id: item.producto.id });
      else if (item) bySku.set(sku, { problem: item.message });
    });
  }
  const keys = [...new Set(lineas.flatMap((l) => (mapeoKey(l) !== null ? [mapeoKey(l)!] : [])))];
  return { bySku, mapeos: await findMapeos(trx, entrega.empresa_id, entrega.plataforma, keys) };
}

/**
 * Our product for each line of an order. A SKU that names one of our products (`codigo`, then
 * `barcode`) decides, whatever was mapped before, and the line's mapping follows it; a line
 * without a usable SKU takes the stored mapping of its most specific platform id. A mapping is not
 * written when lines of one order with that id name different products (a product's lines told
 * apart only by SKU). Any line without a product makes the whole order unprocessable, listing
 * every such line, before anything is written.
 */
async function productosOf(
  trx: Transaction<WebhookDb>,
  entrega: LockedEntrega,
  lineas: readonly ProductoLine[],
  { bySku, mapeos }: LineaLookup,
): Promise<number[]> {
  const bySkuOf = (l: ProductoLine) => (l.sku !== null ? bySku.get(l.sku) : undefined);
  const result = lineas.map((l) => {
    const found = bySkuOf(l);
    if (found && 'id' in found) return found.id;
    const key = mapeoKey(l);
    return key !== null ? mapeos.get(key) : undefined;
  });
  const problems = lineas.flatMap((l, i) => {
    if (result[i] !== undefined) return [];
    const ids = [l.id_variante, l.id_producto_externo].filter(Boolean).join('/') || '?';
    const found = bySkuOf(l);
    return [
      l.sku !== null
        ? `"${l.nombre}" (SKU ${l.sku}): ${found && 'problem' in found ? found.problem : 'no encontrado'}`
        : `"${l.nombre}" (id ${ids}): sin SKU y sin producto vinculado`,
    ];
  });
  if (problems.length > 0) throw new Unprocessable(`Producto no encontrado: ${problems.join('; ')}`);

  const byKey = new Map<string, Set<number>>();
  lineas.forEach((l, i) => {
    const key = mapeoKey(l);
    const found = bySkuOf(l);
    if (key !== null && found && 'id' in found) byKey.set(key, (byKey.get(key) ?? new Set()).add(result[i]!));
  });
  for (const [key, productos] of byKey) {
    if (productos.size !== 1) continue;
    const [productoId] = productos;
    if (mapeos.get(key) === productoId) continue;
    await upsertMapeo(trx, { empresa_id: entrega.empresa_id, plataforma: entrega.plataforma, id_externo: key, producto_id: productoId! });
    mapeos.set(key, productoId!);
  }
  return result as number[];
}
