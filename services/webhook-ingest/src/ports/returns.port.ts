import type { Bus } from '@erp/bus';
import { returnsPlatformSubjects, type TenantContext, type TipoDevolucion } from '@erp/contracts';

export interface DevolucionInput {
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
  createDevolucion(ctx: TenantContext, input: DevolucionInput): Promise<{ id: number; total: string; idempotent: boolean }>;
}

/** Returns over the bus: `returns.platform.create`, as the integration's user. */
export function busReturns(bus: Bus): ReturnsPort {
  return {
    createDevolucion: async (ctx, input) => {
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
