import type { Bus } from '@erp/bus';
import { salesApiSubjects, salesPlatformSubjects, type TenantContext } from '@erp/contracts';

/** How long one batch of platform sales may go on starting sales: its reply comes well within the bus's timeout. */
const BATCH_BUDGET_MS = 5_000;

export interface VentaLine {
  id_producto: number;
  cantidad: string;
  /** Unit price including tax. */
  precio: string;
  descuento: string;
}

export interface CreateVentaInput {
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
  detalles: VentaLine[];
}

/** What order processing needs of the sales service. */
export interface VentasPort {
  /** Creates the sale through the invoicing pipeline; the same `referencia_externa` gives the same sale. */
  createVenta(ctx: TenantContext, input: CreateVentaInput): Promise<{ id: number; idempotent: boolean }>;
  /**
   * Creates the sales through the batch pipeline (`sales.batch.create`), in order, each as
   * `createVenta` would. A sale refused, or not started because the batch ran out of time,
   * answers undefined: its caller makes it alone, where its refusal is told as usual.
   */
  createVentas(ctx: TenantContext, inputs: readonly CreateVentaInput[]): Promise<Array<{ id: number; idempotent: boolean } | undefined>>;
  /** Annuls the sale (stock returned once; annulling again moves nothing). */
  annulVenta(ctx: TenantContext, idVenta: number): Promise<void>;
  /** The company's customer with this email (case-insensitive), created with this name when missing. */
  findOrCreateCliente(ctx: TenantContext, cliente: { email: string; nombre: string | null }): Promise<number>;
  /** Turns the sale into Completada when it is still Pendiente; answers whether it changed it, and the ids of the sale's lines as `ventaLineIds` does. */
  completeIfPending(ctx: TenantContext, idVenta: number): Promise<{ completed: boolean; lineIds: number[] }>;
  /** The sale made for this reference, if one was (it may exist without our record of it after a crash). */
  ventaByReferencia(ctx: TenantContext, referencia: string): Promise<number | null>;
  /** The ids of the sale's lines, in the order they were created. */
  ventaLineIds(ctx: TenantContext, idVenta: number): Promise<number[]>;
}

/** The pipeline's request for a sale, with the platform as origin. */
const saleRequest = ({ detalles, ...rest }: CreateVentaInput) => ({
  ...rest,
  // The pipeline takes JSON numbers; these have at most 4 decimals (prices 2), so they are exact.
  detalles: detalles.map((l) => ({
    id_producto: l.id_producto,
    cantidad: Number(l.cantidad),
    precio: Number(l.precio),
    descuento: Number(l.descuento),
  })),
});

/** Sales over the bus: `sales.create` and `sales.batch.create` with the platform as origin, and the platform subjects. */
export function busSales(bus: Bus): VentasPort {
  return {
    createVenta: async (ctx, input) => {
      const reply = await bus.request(salesApiSubjects, 'sales.create', saleRequest(input), ctx);
      return { id: reply.venta.id, idempotent: reply.idempotent };
    },
    createVentas: async (ctx, inputs) => {
      const reply = await bus.request(
        salesApiSubjects,
        'sales.batch.create',
        { ventas: inputs.map((input, indice) => ({ indice, venta: saleRequest(input) })), plazo_ms: BATCH_BUDGET_MS },
        ctx,
      );
      const made = new Map(
        reply.resultados.flatMap((r) => (r.venta ? [[r.indice, { id: r.venta.id, idempotent: r.idempotent ?? false }]] : [])),
      );
      return inputs.map((_, indice) => made.get(indice));
    },
    annulVenta: async (ctx, idVenta) => {
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
    findOrCreateCliente: async (ctx, cliente) =>
      (await bus.request(salesPlatformSubjects, 'sales.customer.find-or-create', cliente, ctx)).id,
    ventaByReferencia: async (ctx, referencia) =>
      (await bus.request(salesPlatformSubjects, 'sales.sale.by-reference', { referencia_externa: referencia }, ctx))?.id ?? null,
    ventaLineIds: async (ctx, idVenta) =>
      (await bus.request(salesApiSubjects, 'sales.sale.get', { id: idVenta }, ctx)).detalles.map((d) => d.id),
  };
}
