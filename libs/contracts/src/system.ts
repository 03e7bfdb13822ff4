import { z } from 'zod';
import { SCOPES } from './api-keys';
import { DATE_JSON_SCHEMA, DateString } from './fields';
import { documentAs } from './http';

const QuotaDate = (other: string) =>
  documentAs(DateString, {
    ...DATE_JSON_SCHEMA,
    description: `Con \`${other}\`: la llamada cuenta como una solicitud con filtros de fecha.`,
  }).optional();

/**
 * Query of `GET /system/rate-limit`: none but the date filters, which make the call count (and
 * report) as a request with both, under the higher limit; anything else is refused by name.
 */
export const RateLimitQuery = z.strictObject({
  fecha_inicio: QuotaDate('fecha_fin'),
  fecha_fin: QuotaDate('fecha_inicio'),
});

/** `data` of `GET /system/rate-limit`: the company's quota in the current UTC hour, and what the calling key may do. */
export const RateLimitStatus = z.object({
  requests_used: z.number().int(),
  max_requests: z.number().int(),
  remaining_requests: z.number().int(),
  /** Top of the next hour, ISO 8601 UTC. */
  reset_time: z.iso.datetime(),
  window_minutes: z.number().int(),
  limits: z.object({ standard: z.number().int(), with_date_filters: z.number().int() }),
  current_limit_type: z.enum(['standard', 'with_date_filters']),
  empresa_id: z.number().int(),
  empresa_nombre: z.string(),
  /** The calling key's scopes (interface 1.7.0); the quota is the company's, whichever key counts. */
  alcances: z.array(z.enum(SCOPES)),
  /** When the calling key stops working (null: never). */
  expira_el: z.iso.datetime().nullable(),
});
export type RateLimitStatus = z.output<typeof RateLimitStatus>;
