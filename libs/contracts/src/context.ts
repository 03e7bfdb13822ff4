import { z } from 'zod';

/**
 * What every request carries across the bus besides its payload: who is asking and for which
 * company. The gateway builds it after authentication; services trust it because only the
 * gateway and the admin CLI can publish on the request subjects.
 */
export const RequestContextSchema = z.object({
  requestId: z.string().min(1).max(128),
  empresa: z
    .object({
      id: z.number().int().positive(),
      nombre: z.string(),
      /** Company default tax rate, exact decimal string (e.g. "13"). */
      iva: z.string(),
      venderSinStock: z.boolean(),
    })
    .optional(),
  usuario: z.object({ id: z.number().int().positive(), nombre: z.string() }).nullable().optional(),
});

export type RequestContext = z.infer<typeof RequestContextSchema>;

/** A context that is sure to carry a company: what every tenant-scoped handler requires. */
export type TenantContext = RequestContext & { empresa: NonNullable<RequestContext['empresa']> };
