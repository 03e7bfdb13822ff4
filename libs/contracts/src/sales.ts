import { z } from 'zod';
import { defineCatalog, defineEvents } from './catalog';

/**
 * Subjects the sales service answers for other services. `sales.sale.exists` tells the owner of
 * a stock reservation's key whether the sale it was taken for was committed.
 */
export const salesSubjects = defineCatalog({
  'sales.sale.exists': {
    tenant: false,
    errors: [],
    request: z.object({ empresa_id: z.number().int().positive(), clave: z.string().min(1).max(200) }),
    reply: z.object({ exists: z.boolean() }),
  },
});

export const salesEvents = defineEvents({
  /** A sale was committed. `clave_reserva` is the key its stock was reserved under (null when it took none). */
  'events.sales.sale.created': {
    payload: z.object({
      empresa_id: z.number().int().positive(),
      id_venta: z.number().int().positive(),
      clave_reserva: z.string().min(1).max(200).nullable(),
    }),
  },
});
