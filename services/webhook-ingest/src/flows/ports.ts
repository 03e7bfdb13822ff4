import type { Bus } from '@erp/bus';
import {
  AppError,
  inventorySubjects,
  returnsPlatformSubjects,
  salesApiSubjects,
  salesPlatformSubjects,
  webhookGatewaySubjects,
  type RequestOf,
  type ReplyOf,
  type TenantContext,
  type TipoDevolucion,
} from '@erp/contracts';

/** A delivery that can never succeed as it is: kept as failed with this reason until replayed. */
export class Unprocessable extends Error {
  override readonly name = 'Unprocessable';
}

export interface SaleLine {
  id_producto: number;
  cantidad: string;
  /** Unit price including tax. */
  precio: string;
  descuento: string;
}

export interface CreateSaleInput {
  referencia_externa: string;
  fecha: string;
  estado: 'Completada' | 'Pendiente';
  id_sucursal: number;
  id_bodega: number;
  id_documento: number;
  id_canal?: number;
  id_cliente?: number;
  forma_pago?: string;
  observaciones?: string;
  /** Platform orders are already taken: their stock may go below zero. */
  permitir_sin_stock: true;
  origen: 'woocommerce' | 'shopify';
  detalles: SaleLine[];
}

/** What order processing needs of the sales service. */
export interface SalesPort {
  /** Creates the sale through the invoicing pipeline; the same `referencia_externa` gives the same sale. */
  createSale(ctx: TenantContext, input: CreateSaleInput): Promise<{ id: number; idempotent: boolean }>;
  /** Annuls the sale (stock returned once; annulling again moves nothing). */
  annulSale(ctx: TenantContext, idVenta: number): Promise<void>;
  /** The company's customer with this email (case-insensitive), created with this name when missing. */
  findOrCreateCustomer(ctx: TenantContext, cliente: { email: string; nombre: string | null }): Promise<number>;
  /** Turns the sale into Completada when it is still Pendiente; answers whether it changed it, and the ids of the sale's lines as `saleLineIds` does. */
  completeIfPending(ctx: TenantContext, idVenta: number): Promise<{ completed: boolean; lineIds: number[] }>;
  /** The sale made for this reference, if one was (it may exist without our record of it after a crash). */
  saleByReference(ctx: TenantContext, referencia: string): Promise<number | null>;
  /** The ids of the sale's lines, in the order they were created. */
  saleLineIds(ctx: TenantContext, idVenta: number): Promise<number[]>;
}

/** What product updates need of the inventory's catalog besides stock. */
export interface CatalogPort {
  updateProduct(ctx: TenantContext, id: number, changes: { nombre?: string; precio?: string; enable?: 0 | 1 }): Promise<void>;
  createProduct(
    ctx: TenantContext,
    product: { codigo: string; nombre: string; precio: string; enable: 0 | 1; tipo?: 'Producto' | 'Servicio' },
  ): Promise<number>;
}

export interface ReturnInput {
  id_venta: number;
  fecha: string;
  tipo: TipoDevolucion;
  /** Keeps a refund delivered again to the return it already made. */
  referencia: string;
  observaciones: string;
  detalles: Array<{ id_detalle: number; cantidad: string }>;
}

/** What refunds need of the returns service. */
export interface ReturnsPort {
  /** Books a return (stock back unless `descuento_ajuste`); the same `referencia` answers the same return. */
  createReturn(ctx: TenantContext, input: ReturnInput): Promise<{ id: number; total: string; idempotent: boolean }>;
}

/** Returns over the bus: `returns.platform.create`, as the integration's user. */
export function busReturns(bus: Bus): ReturnsPort {
  return {
    createReturn: async (ctx, input) => {
      const reply = await bus.request(
        returnsPlatformSubjects,
        'returns.platform.create',
        {
          ...input,
          empresa_id: ctx.empresa!.id,
          usuario: ctx.usuario,
          // Quantities have at most 3 decimals here (the platforms sell whole units), so they are exact as numbers.
          detalles: input.detalles.map((d) => ({ id_detalle: d.id_detalle, cantidad: Number(d.cantidad) })),
        },
        ctx,
      );
      return { id: reply.devolucion.id, total: String(reply.devolucion.total), idempotent: reply.idempotent };
    },
  };
}

/** Sales over the bus: `sales.create` with the platform as origin, and the platform subjects. */
export function busSales(bus: Bus): SalesPort {
  return {
    createSale: async (ctx, input) => {
      const { detalles, ...rest } = input;
      const reply = await bus.request(
        salesApiSubjects,
        'sales.create',
        {
          ...rest,
          origen: input.origen,
          // The pipeline takes JSON numbers; these have at most 4 decimals (prices 2), so they are exact.
          detalles: detalles.map((l) => ({
            id_producto: l.id_producto,
            cantidad: Number(l.cantidad),
            precio: Number(l.precio),
            descuento: Number(l.descuento),
          })),
        },
        ctx,
      );
      return { id: reply.venta.id, idempotent: reply.idempotent };
    },
    annulSale: async (ctx, idVenta) => {
      await bus.request(salesPlatformSubjects, 'sales.sale.annul', { id_venta: idVenta }, ctx);
    },
    completeIfPending: async (ctx, idVenta) => {
      const venta = await bus.request(salesApiSubjects, 'sales.sale.get', { id: idVenta }, ctx);
      const lineIds = venta.detalles.map((d) => d.id);
      if (venta.estado !== 'Pendiente') return { completed: false, lineIds };
      // Completing changes the state only: the lines read here stay the sale's.
      await bus.request(salesApiSubjects, 'sales.update', { id: idVenta, cambios: { estado: 'Completada' } }, ctx);
      return { completed: true, lineIds };
    },
    findOrCreateCustomer: async (ctx, cliente) =>
      (await bus.request(salesPlatformSubjects, 'sales.customer.find-or-create', cliente, ctx)).id,
    saleByReference: async (ctx, referencia) =>
      (await bus.request(salesPlatformSubjects, 'sales.sale.by-reference', { referencia_externa: referencia }, ctx))?.id ?? null,
    saleLineIds: async (ctx, idVenta) =>
      (await bus.request(salesApiSubjects, 'sales.sale.get', { id: idVenta }, ctx)).detalles.map((d) => d.id),
  };
}

/** The catalog over the bus: `inventory.product.update` and `inventory.product.create`. */
export function busCatalog(bus: Bus): CatalogPort {
  return {
    updateProduct: async (ctx, id, cambios) => {
      await bus.request(inventorySubjects, 'inventory.product.update', { id, cambios }, ctx);
    },
    // A code that exists already answers its product, so a replayed creation makes no second one.
    createProduct: async (ctx, product) => (await bus.request(inventorySubjects, 'inventory.product.create', product, ctx)).id,
  };
}

type ResolveRequest = RequestOf<typeof inventorySubjects, 'inventory.product.resolve'>;
type AdjustRequest = RequestOf<typeof inventorySubjects, 'inventory.stock.adjust'>;

export interface InventoryPort {
  resolve(ctx: TenantContext, req: ResolveRequest): Promise<ReplyOf<typeof inventorySubjects, 'inventory.product.resolve'>>;
  adjust(ctx: TenantContext, req: AdjustRequest): Promise<ReplyOf<typeof inventorySubjects, 'inventory.stock.adjust'>>;
}

export function busInventory(bus: Bus): InventoryPort {
  return {
    resolve: (ctx, req) => bus.request(inventorySubjects, 'inventory.product.resolve', req, ctx),
    adjust: (ctx, req) => bus.request(inventorySubjects, 'inventory.stock.adjust', req, ctx),
  };
}

/**
 * The company context and acting user of an integration, from the gateway (owner of both),
 * remembered for `ttlMs`: a burst of deliveries asks once.
 */
export function gatewayContexts(bus: Bus, ttlMs: number) {
  const cache = new Map<string, { at: number; ctx: TenantContext }>();
  return async (empresaId: number, usuarioId: number, requestId: string): Promise<TenantContext> => {
    const key = `${empresaId}:${usuarioId}`;
    const hit = cache.get(key);
    if (hit && Date.now() - hit.at < ttlMs) return { ...hit.ctx, requestId };
    const reply = await bus.request(
      webhookGatewaySubjects,
      'gateway.webhook.context',
      { empresa_id: empresaId, usuario_id: usuarioId },
      { requestId },
    );
    if (!reply.empresa) throw new Unprocessable('La empresa de la integración no existe o está inactiva');
    if (!reply.usuario) throw new Unprocessable('El usuario de la integración no existe o está inactivo');
    const ctx: TenantContext = { requestId, empresa: reply.empresa, usuario: reply.usuario };
    cache.set(key, { at: Date.now(), ctx });
    return ctx;
  };
}

export type ContextLookup = ReturnType<typeof gatewayContexts>;

/** Errors of other services that retrying cannot fix. */
export function isPermanent(err: unknown): boolean {
  if (err instanceof Unprocessable) return true;
  return err instanceof AppError && !['UNAVAILABLE', 'TIMEOUT', 'INTERNAL'].includes(err.code);
}

/** A failure reason for people: the message, and the details of a validation error. */
export function reasonOf(err: unknown): string {
  if (err instanceof AppError && err.details) {
    const details = Object.entries(err.details)
      .map(([field, messages]) => `${field}: ${messages.join(', ')}`)
      .join('; ');
    return `${err.message} (${details})`.slice(0, 2000);
  }
  return (err instanceof Error ? err.message : String(err)).slice(0, 2000);
}
